package local_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// zstdMagic starts the files a Store compresses (backend/compress.go).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// readRecord returns the text of a stored file: decompressed when it is a
// zstd frame, as it is otherwise. Tests that look for values in files read
// them through it, so compression never hides what they look for.
func readRecord(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, zstdMagic) {
		return data
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	text, err := dec.DecodeAll(data, nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return text
}

// writeRecord replaces the file at path with text, compressed as a Store
// writes it: what someone with write access to the backend could do.
func writeRecord(t *testing.T, path string, text []byte) {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	if err := os.WriteFile(path, enc.EncodeAll(text, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}
