// Package privfile creates, replaces and locks the files that hold kumo's
// state and secrets (codec keys, the token signing key, the home's PKI, the
// local backend's locks): readable by their owner only, and whole or not at
// all.
package privfile

import (
	"errors"
	"os"
	"path/filepath"
)

// CreateOnce writes data to a new file at path (mode 0600, in a directory
// created 0700 if missing) unless path exists, which it then leaves alone: of
// two processes creating it at once, the first wins and the second uses its
// file. The data is written and synced under a temporary name and linked into
// place, so nobody ever reads a half-written file.
func CreateOnce(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(f.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}
