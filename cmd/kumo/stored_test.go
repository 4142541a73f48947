package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

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

// checkStoredFiles fails t for every file under dir that holds one of
// secrets in clear (compressed files decompressed), and returns how many
// files it read.
func checkStoredFiles(t *testing.T, dir string, secrets []string) int {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := readStored(path)
		if err != nil {
			return err
		}
		files++
		for _, m := range secrets {
			if bytes.Contains(data, []byte(m)) {
				t.Errorf("%s holds %s in clear", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
