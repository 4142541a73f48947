package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/klauspost/compress/zstd"
)

// readStored returns the content of a file under KUMO_HOME as tests should
// look into it: the backend compresses releases, specs and state batches
// (zstd frames, backend/compress.go), which would hide a value in clear from
// a plain search, so those are decompressed.
func readStored(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		return data, err
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	text, err := dec.DecodeAll(data, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return text, nil
}
