package backend

// Compression of the records a Store writes (release files, state chunks,
// specs, state batches): zstd frames, chosen over gzip by measurement
// (BenchmarkCompression, the spec and state of 10,000 ConfigMaps, 10.6 MB of
// JSON: gzip -6 481 KB in 351 ms, gzip -9 475 KB in 921 ms, zstd "better"
// 443 KB in 267 ms; docs/performance.md). Records written before compression
// are plain YAML or JSON and still read: a stored record is decompressed only
// when it starts with zstd's magic number, which no YAML or JSON text can
// start with.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstdMagic starts every zstd frame (RFC 8878, section 3.1.1).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// maxDecompressed bounds what one stored record may decompress to, so that a
// small object crafted to expand without end (a "zip bomb" in the bucket) fails
// with an error naming it instead of exhausting the server's memory. The
// largest records are the specs of 50,000 resources, well under 100 MB.
const maxDecompressed = 1 << 30

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
	zstdErr  error
)

// codecs returns the process's zstd encoder and decoder. Both are safe for
// concurrent EncodeAll/DecodeAll; they keep a few small buffers (lower-memory
// encoder, a decoder that does not keep large buffers around) rather than one
// per record ever written.
func codecs() (*zstd.Encoder, *zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdEnc, zstdErr = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedBetterCompression),
			zstd.WithEncoderConcurrency(2),
			zstd.WithLowerEncoderMem(true),
			zstd.WithEncoderCRC(true))
		if zstdErr != nil {
			return
		}
		zstdDec, zstdErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(2),
			zstd.WithDecoderMaxMemory(maxDecompressed),
			zstd.WithDecoderLowmem(true))
	})
	return zstdEnc, zstdDec, zstdErr
}

// compress returns data as one zstd frame.
func compress(data []byte) ([]byte, error) {
	enc, _, err := codecs()
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return enc.EncodeAll(data, make([]byte, 0, len(data)/4+64)), nil
}

// isCompressed reports whether a stored record is a zstd frame.
func isCompressed(data []byte) bool { return bytes.HasPrefix(data, zstdMagic) }

// decompress returns the text of a stored record: a zstd frame decompressed,
// anything else (a record written before compression) as it is.
func decompress(data []byte) ([]byte, error) {
	if !isCompressed(data) {
		return data, nil
	}
	_, dec, err := codecs()
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	out, err := dec.DecodeAll(data, nil)
	if err != nil {
		return nil, fmt.Errorf("decompress (zstd, at most %d MiB): %w", maxDecompressed>>20, err)
	}
	return out, nil
}

// encodeCompressed encodes a spec, state entry or batch as compressed JSON.
func encodeCompressed(v any) ([]byte, error) {
	text, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return compress(text)
}

// decodeStored decodes a spec, state entry or batch as stored: compressed
// JSON, or (written before compression) plain YAML or JSON.
func decodeStored(data []byte, v any) error {
	if !isCompressed(data) {
		return decodeYAML(data, v)
	}
	text, err := decompress(data)
	if err != nil {
		return err
	}
	return decodeJSON(text, v)
}
