package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Collect's trash: a spec or a state chunk Collect removes is first copied
// under gcTrashDir, where readers look when the object itself is missing,
// and stays there for Grace.
//
// Collect removes an object, then reads the releases again and writes back
// what one of them names (store_gc.go). A release whose writer found the
// object just before the removal can be read between the two: without the
// trash, that read fails with "spec … not found" (and, should the writer
// stop before it looks again, for good). With it, every read of a release
// finds what the release names, and the next collection past Grace writes
// back from the trash what a release names and is still missing, then
// empties it.

const gcTrashDir = gcRoot + "/trash"

// trashKey is where the trash keeps a copy of key.
func trashKey(key string) string { return gcTrashDir + "/" + key }

// trashed is the key a trash key copies ("" when it is not one).
func trashed(key string) string {
	k, ok := strings.CutPrefix(key, gcTrashDir+"/")
	if !ok {
		return ""
	}
	return k
}

// readNamed reads key, a spec or a state chunk a release names, or its copy
// in the trash when a collection removed it (what names it in errors).
func (s *Store) readNamed(ctx context.Context, key, what string) ([]byte, error) {
	data, _, err := s.d.Read(ctx, key)
	if errors.Is(err, ErrNotFound) {
		data, _, err = s.d.Read(ctx, trashKey(key))
	}
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return data, nil
}

// throwAway copies key's data into the trash, then removes key.
func (g *gcPass) throwAway(ctx context.Context, key string, data []byte) error {
	s := g.s
	if _, err := s.write(ctx, trashKey(key), data, Condition{}); err != nil {
		return fmt.Errorf("keep %s in the trash before removing it: %w", s.d.Where(key), err)
	}
	if err := s.d.Delete(ctx, key); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("remove %s: %w", s.d.Where(key), err)
	}
	return nil
}

// findTrash finds the trash's copies, and those kept there for Grace, but
// for the copies of what this pass removes again (they are made anew, their
// time starting when the pass is claimed).
func (g *gcPass) findTrash(ctx context.Context) error {
	var keys []string
	if err := walk(ctx, g.s.d, gcTrashDir, &keys); err != nil {
		return err
	}
	again := map[string]bool{}
	for _, k := range g.dueObjects {
		again[trashKey(k)] = true
	}
	for _, k := range keys {
		if again[k] {
			continue
		}
		g.seen[k] = true
		if due(g.marks.observe(k, "", g.now), g.now, g.p.Grace) {
			g.dueTrash = append(g.dueTrash, k)
		}
	}
	return nil
}

// emptyTrash removes the copies kept for Grace, writing back first the
// object of one that a release names (refs, read this pass) and that is
// missing: its writer stopped before it could look again.
func (g *gcPass) emptyTrash(ctx context.Context, refs *gcRefs) error {
	s := g.s
	for _, k := range g.dueTrash {
		if orig := trashed(k); refs.names(orig) {
			if err := g.writeBackFromTrash(ctx, orig); err != nil {
				return err
			}
		}
		if err := s.d.Delete(ctx, k); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("empty the trash of %s: %w", s.d.Where(k), err)
		}
		delete(g.marks, k)
	}
	return nil
}

// writeBackFromTrash writes key back from its copy in the trash when it is
// missing.
func (g *gcPass) writeBackFromTrash(ctx context.Context, key string) error {
	s := g.s
	ok, err := s.d.Exists(ctx, key)
	if err != nil {
		return fmt.Errorf("look at %s: %w", s.d.Where(key), err)
	}
	if ok {
		return nil
	}
	data, _, err := s.d.Read(ctx, trashKey(key))
	if errors.Is(err, ErrNotFound) {
		return nil // no copy to write back from: gone from both
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", s.d.Where(trashKey(key)), err)
	}
	return g.restore(ctx, key, data)
}
