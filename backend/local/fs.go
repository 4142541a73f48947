package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const (
	dirPerm  = 0o700 // releases hold live state (Secrets included): owner only
	filePerm = 0o600
	// tmpPrefix starts every temporary file name; readers skip such names, so a
	// temp file left by a killed process is never mistaken for data.
	tmpPrefix = ".tmp-"
)

// IsTemp reports whether name (a file's or a directory's, without its
// directory) is one the driver writes aside rather than a record: a file
// being written, or trash (trash.go) whose space is not freed yet. Listings
// skip such names.
func IsTemp(name string) bool { return strings.HasPrefix(name, tmpPrefix) }

// writeTemp writes data to a new temporary file in dir, fsyncs and closes it, and
// returns its path. The caller links or renames it into place.
func writeTemp(dir string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return "", fmt.Errorf("create temp file in %s: %w", dir, err)
	}
	name := f.Name()
	fail := func(err error) (string, error) {
		_ = f.Close()
		_ = os.Remove(name)
		return "", err
	}
	if err := f.Chmod(filePerm); err != nil {
		return fail(fmt.Errorf("chmod %s: %w", name, err))
	}
	if _, err := f.Write(data); err != nil {
		return fail(fmt.Errorf("write %s: %w", name, err))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("fsync %s: %w", name, err))
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(name)
		return "", fmt.Errorf("close %s: %w", name, err)
	}
	return name, nil
}

// replaceFile atomically writes data to path: temp file, fsync, rename, fsync
// dir. The copy it replaces goes to t, which frees it later.
func replaceFile(path string, data []byte, t *trash) error {
	dir := filepath.Dir(path)
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return err
	}
	old := keep(path)
	defer t.add(old)
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("rename %s to %s: %w", tmp, path, err)
	}
	return syncDir(dir)
}

// createFile atomically and exclusively writes data to path: temp file, fsync,
// link to path (which fails if path exists), fsync dir. It returns an error
// satisfying errors.Is(err, fs.ErrExist) when path already exists.
func createFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return err
	}
	linkErr := os.Link(tmp, path)
	rmErr := os.Remove(tmp)
	if linkErr != nil {
		return linkErr
	}
	if rmErr != nil {
		return fmt.Errorf("remove %s: %w", tmp, rmErr)
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory so that entries created, renamed or removed in it
// survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}

// ensureDir creates dir (which must be inside base, or base itself) and any missing
// parents up to base, fsyncing each parent that gained an entry.
func ensureDir(base, dir string) error {
	rel, err := filepath.Rel(base, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("directory %s is outside %s", dir, base)
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	cur := base
	if rel == "." {
		return nil
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		next := filepath.Join(cur, part)
		err := os.Mkdir(next, dirPerm)
		switch {
		case err == nil:
			if err := syncDir(cur); err != nil {
				return err
			}
		case errors.Is(err, fs.ErrExist):
			// created earlier or concurrently: fine if it is a directory
			if fi, serr := os.Stat(next); serr != nil || !fi.IsDir() {
				return fmt.Errorf("create directory %s: %w", next, err)
			}
		default:
			return fmt.Errorf("create directory %s: %w", next, err)
		}
		cur = next
	}
	return nil
}
