package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kumoproj/kumo/backend"
)

// lockName is the file, in the directory of a conditionally replaced file, whose
// flock serializes those replaces.
const lockName = ".lock"

// versionOf is a file's version: the hash of its bytes. Every write of a release
// changes ModifyTime, so two different copies never share a version.
func versionOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

// Read returns a file's bytes and version.
func (d *Driver) Read(_ context.Context, key string) ([]byte, string, error) {
	path := d.Where(key)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%s: %w", path, backend.ErrNotFound)
	}
	if err != nil {
		return nil, "", err
	}
	return data, versionOf(data), nil
}

// Exists reports whether key is a regular file (a directory named like one is not).
func (d *Driver) Exists(_ context.Context, key string) (bool, error) {
	fi, err := os.Lstat(d.Where(key))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fi.Mode().IsRegular(), nil
}

// Write replaces the file atomically, creates it exclusively (CreateOnly, by a
// hard link, which fails if the file exists), or replaces it under the
// directory's flock if it still has the version asked for (IfVersion).
func (d *Driver) Write(_ context.Context, key string, data []byte, cond backend.Condition) (string, error) {
	path := d.Where(key)
	if cond.IfVersion != "" {
		return d.replaceIf(path, data, cond.IfVersion)
	}
	if err := ensureDir(d.root, filepath.Dir(path)); err != nil {
		return "", err
	}
	write := func(path string, data []byte) error { return replaceFile(path, data, d.trash) }
	if cond.CreateOnly {
		write = createFile
	}
	if err := write(path, data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("%s: %w", path, backend.ErrExists)
		}
		return "", err
	}
	return versionOf(data), nil
}

func (d *Driver) replaceIf(path string, data []byte, version string) (string, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		// Checked again under the lock; this avoids creating a lock file for nothing.
		return "", fmt.Errorf("%s: %w", path, backend.ErrNotFound)
	}
	unlock, err := lockFile(filepath.Join(filepath.Dir(path), lockName))
	if err != nil {
		return "", err
	}
	defer unlock()
	current, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", path, backend.ErrNotFound)
	}
	if err != nil {
		return "", err
	}
	if v := versionOf(current); v != version {
		return "", fmt.Errorf("%w: %s is version %s", backend.ErrConflict, path, v)
	}
	if err := replaceFile(path, data, d.trash); err != nil {
		return "", err
	}
	return versionOf(data), nil
}

// List returns the regular files and directories in dir, skipping temporary
// files and the lock file.
func (d *Driver) List(_ context.Context, dir string) ([]backend.Entry, error) {
	ents, err := os.ReadDir(d.Where(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]backend.Entry, 0, len(ents))
	for _, e := range ents {
		// The lock file replaceIf takes is not a record: a copy (backend.Copy)
		// must not carry it to another backend.
		if IsTemp(e.Name()) || e.Name() == lockName || !e.IsDir() && !e.Type().IsRegular() {
			continue
		}
		out = append(out, backend.Entry{Name: e.Name(), Dir: e.IsDir()})
	}
	return out, nil
}

// Delete removes a regular file: it is renamed to a trash name, which frees
// its space later (trash.go).
func (d *Driver) Delete(_ context.Context, key string) error {
	path := d.Where(key)
	if fi, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) || err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w", path, backend.ErrNotFound)
	}
	dir := filepath.Dir(path)
	gone := trashName(dir)
	if err := os.Rename(path, gone); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", path, backend.ErrNotFound)
		}
		return err
	}
	err := syncDir(dir)
	d.trash.add(gone)
	return err
}

// DeleteAll removes a directory tree. It is renamed into a new trash
// directory, so readers see all of it or none, and that rename is made
// durable; the tree's files are unlinked later (trash.go).
func (d *Driver) DeleteAll(_ context.Context, dir string) error {
	path := d.Where(dir)
	parent := filepath.Dir(path)
	// A trash directory is anyone's to remove (leftovers): should another
	// process take the new one before the tree is moved in, make another.
	for range 3 {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return nil // never there, or removed concurrently
		}
		bin, err := os.MkdirTemp(parent, trashPrefix+"*")
		if err != nil {
			return err
		}
		err = os.Rename(path, filepath.Join(bin, "gone"))
		if err == nil {
			err = syncDir(parent)
		}
		// Emptied only once the move is durable: a crash never leaves
		// the tree in place with some of its files gone.
		d.trash.add(bin)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return err
	}
	return fmt.Errorf("remove %s: its trash directory was removed while the tree moved in, three times", path)
}
