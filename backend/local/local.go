// Package local is the default kumo backend: releases, specs, state, workspaces
// and run logs as files under one root directory ($KUMO_HOME, resolved by the
// caller). Its Driver stores bytes at paths; backend.Store on top of it checks
// names, encodes records and numbers revisions, so the layout under the root is
// the one backend.Store documents (releases/<project>/<workspace>/<revision>.yaml,
// specs/<hash>.yaml, workspaces/<name>.yaml, runs/<run ID>/<part>.log, ...), plus
// releases/<project>/<workspace>/.lock, the flock serializing release updates.
//
// Every write goes to a temporary file (named .tmp-*, which listings skip) in the
// target directory, is fsynced, and is then renamed into place, or hard-linked
// for a create-only write so that an existing file is never replaced; the
// directory is fsynced afterwards. A reader therefore never sees a half-written
// file, and a write that returned survives a killed process or a power cut.
// What a delete removes, and the copy a replace supersedes, goes to a trash
// name in its directory first and is unlinked on a goroutine of the driver's
// own (trash.go; Wait waits for it). A
// conditional replace holds an flock on its directory's lock file, which excludes
// other processes as well as other goroutines.
//
// Keys reach the driver built from names checked with backend.ValidateName, and
// the driver refuses to create a directory outside the root anyway.
package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kumoproj/kumo/backend"
)

// Backend stores kumo's records in a directory tree. It is safe for concurrent use
// by goroutines and by processes sharing the root.
type Backend struct {
	*backend.Store
	driver *Driver
}

var _ backend.Backend = (*Backend)(nil)

// New returns a backend rooted at root, creating the directory if needed.
func New(root string) (*Backend, error) {
	d, err := NewDriver(root)
	if err != nil {
		return nil, err
	}
	return &Backend{Store: backend.NewStore(d), driver: d}, nil
}

// Root returns the absolute root directory.
func (b *Backend) Root() string { return b.driver.root }

// Driver is the backend.Driver over a directory tree.
type Driver struct {
	root  string
	trash *trash
}

var _ backend.Driver = (*Driver)(nil)

// NewDriver returns a driver rooted at root, creating the directory if needed.
func NewDriver(root string) (*Driver, error) {
	if root == "" {
		return nil, errors.New("local backend: root directory is empty")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("local backend: root %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, dirPerm); err != nil {
		return nil, fmt.Errorf("local backend: create root %s: %w", abs, err)
	}
	return &Driver{root: abs, trash: newTrash()}, nil
}

// Wait returns once the files the driver removed or replaced so far are
// unlinked (trash.go): before the process exits, or a test looks at the
// directory tree itself.
func (d *Driver) Wait() { d.trash.wait() }

// Wait is the driver's Wait.
func (b *Backend) Wait() { b.driver.Wait() }

// Where is the path of key.
func (d *Driver) Where(key string) string {
	return filepath.Join(d.root, filepath.FromSlash(key))
}
