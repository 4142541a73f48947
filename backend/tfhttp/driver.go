package tfhttp

import (
	"context"
	"fmt"

	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/kumoproj/kumo/backend"
)

// Driver is the backend.Driver over a Terraform http state service: a
// document per key and an index document per directory (see the package
// comment).
type Driver struct {
	o   Options
	who string
}

var _ backend.Driver = (*Driver)(nil)

// Where is the address of key's document.
func (d *Driver) Where(key string) string { return d.address(key) }

func (d *Driver) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Read is one GET.
func (d *Driver) Read(ctx context.Context, key string) ([]byte, string, error) {
	o, ok, err := d.getObject(ctx, key)
	if err != nil {
		return nil, "", d.fail(ctx, err)
	}
	if !ok {
		return nil, "", fmt.Errorf("%s: %w", d.Where(key), backend.ErrNotFound)
	}
	if o.Data == nil {
		o.Data = []byte{}
	}
	return o.Data, o.Version, nil
}

// Exists is a GET too: the protocol has no HEAD.
func (d *Driver) Exists(ctx context.Context, key string) (bool, error) {
	_, ok, err := d.getObject(ctx, key)
	return ok, d.fail(ctx, err)
}

// Write compares the stored version with cond and stores the document, then
// lists it in its directory's index, all under the index's lock.
func (d *Driver) Write(ctx context.Context, key string, data []byte, cond backend.Condition) (string, error) {
	dir, name := split(key)
	version := newVersion()
	err := d.withLock(ctx, indexName(dir), key, func(id string) error {
		cur, exists, err := d.getObject(ctx, key)
		if err != nil {
			return err
		}
		switch {
		case cond.CreateOnly && exists:
			return fmt.Errorf("%s: %w", d.Where(key), backend.ErrExists)
		case cond.IfVersion != "" && !exists:
			return fmt.Errorf("%s: %w", d.Where(key), backend.ErrNotFound)
		case cond.IfVersion != "" && cur.Version != cond.IfVersion:
			return fmt.Errorf("%w: %s is version %s", backend.ErrConflict, d.Where(key), cur.Version)
		}
		if err := d.putObject(ctx, key, object{Kumo: documentFormat, Version: version, Data: data}); err != nil {
			return err
		}
		// Looked at on every write, not only on creation: an object stored by
		// a writer that died before listing it is listed by the next.
		ix, _, err := d.getIndex(ctx, dir)
		if err != nil {
			return err
		}
		if i := ix; !slices.Contains(i.Objects, name) {
			if i.empty() {
				if err := d.ensureListed(ctx, dir); err != nil {
					return err
				}
			}
			add(&i.Objects, name)
			return d.putIndex(ctx, dir, i, id)
		}
		return nil
	})
	if err != nil {
		return "", d.fail(ctx, err)
	}
	return version, nil
}

// List is one GET of the directory's index.
func (d *Driver) List(ctx context.Context, dir string) ([]backend.Entry, error) {
	ix, _, err := d.getIndex(ctx, dir)
	if err != nil {
		return nil, d.fail(ctx, err)
	}
	out := make([]backend.Entry, 0, len(ix.Objects)+len(ix.Dirs))
	for _, n := range ix.Objects {
		out = append(out, backend.Entry{Name: n})
	}
	for _, n := range ix.Dirs {
		out = append(out, backend.Entry{Name: n, Dir: true})
	}
	return out, nil
}

// Delete removes the document and its index entry under the index's lock.
func (d *Driver) Delete(ctx context.Context, key string) error {
	dir, name := split(key)
	err := d.withLock(ctx, indexName(dir), key, func(id string) error {
		_, exists, err := d.getObject(ctx, key)
		if err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("%s: %w", d.Where(key), backend.ErrNotFound)
		}
		// Unlisted first: a crash in between leaves an object nobody lists
		// (the next write of the key lists it again), never a listed one
		// that is gone.
		if err := d.dropObjects(ctx, dir, id, []string{name}); err != nil {
			return err
		}
		return d.remove(ctx, key)
	})
	return d.fail(ctx, err)
}

// dropObjects removes names from dir's index (held locked with id), and dir
// from its parent's once empty.
func (d *Driver) dropObjects(ctx context.Context, dir, id string, names []string) error {
	ix, _, err := d.getIndex(ctx, dir)
	if err != nil {
		return err
	}
	changed := false
	for _, n := range names {
		changed = drop(&ix.Objects, n) || changed
	}
	if !changed {
		return nil
	}
	if err := d.putIndex(ctx, dir, ix, id); err != nil {
		return err
	}
	if ix.empty() {
		return d.unlist(ctx, dir)
	}
	return nil
}

// deleteParallel bounds the DELETEs DeleteAll sends at once.
const deleteParallel = 16

// DeleteAll empties the subdirectories first (each under its own lock), then
// unlists and removes dir's objects under dir's lock.
func (d *Driver) DeleteAll(ctx context.Context, dir string) error {
	ix, _, err := d.getIndex(ctx, dir)
	if err != nil {
		return d.fail(ctx, err)
	}
	for _, sub := range ix.Dirs {
		if err := d.DeleteAll(ctx, join(dir, sub)); err != nil {
			return err
		}
	}
	err = d.withLock(ctx, indexName(dir), dir, func(id string) error {
		ix, _, err := d.getIndex(ctx, dir)
		if err != nil {
			return err
		}
		names := slices.Clone(ix.Objects)
		if err := d.dropObjects(ctx, dir, id, names); err != nil {
			return err
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(deleteParallel)
		for _, n := range names {
			g.Go(func() error { return d.remove(gctx, join(dir, n)) })
		}
		return g.Wait()
	})
	return d.fail(ctx, err)
}
