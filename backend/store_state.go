package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

func entryKey(key ReleaseKey, id string) string { return stateDir(key) + "/" + entryName(id) }

// PutStateEntry records one resource's outcome for a release, replacing any earlier
// entry for the same ID. The release must exist (else ErrNotFound). It writes one
// small object, so an apply writes bytes linear in its size.
func (s *Store) PutStateEntry(ctx context.Context, key ReleaseKey, entry StateEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := key.Validate(); err != nil {
		return fmt.Errorf("put state entry: %w", err)
	}
	if entry.ID == "" {
		return fmt.Errorf("put state entry of %s: resource ID is empty", key)
	}
	ok, err := s.releaseExists(ctx, key)
	if err != nil {
		return fmt.Errorf("put state entry %s of %s: %w", entry.ID, key, err)
	}
	if !ok {
		return fmt.Errorf("put state entry %s of %s: release %w", entry.ID, key, ErrNotFound)
	}
	if entry.Resource != nil {
		sealed, err := s.sealResource(*entry.Resource, releaseScope(key.Project, key.Workspace))
		if err != nil {
			return fmt.Errorf("put state entry %s of %s: encrypt sensitive values: %w", entry.ID, key, err)
		}
		entry.Resource = &sealed
	}
	data, err := encodeJSON(entry) // small, and cleared once folded: not worth a frame
	if err != nil {
		return fmt.Errorf("put state entry %s of %s: encode: %w", entry.ID, key, err)
	}
	if _, err := s.write(ctx, entryKey(key, entry.ID), data, Condition{}); err != nil {
		return fmt.Errorf("put state entry %s of %s: %w", entry.ID, key, err)
	}
	return nil
}

// GetStateEntry returns the entry for id, and whether there is one.
func (s *Store) GetStateEntry(ctx context.Context, key ReleaseKey, id string) (StateEntry, bool, error) {
	if err := ctx.Err(); err != nil {
		return StateEntry{}, false, err
	}
	if err := key.Validate(); err != nil {
		return StateEntry{}, false, fmt.Errorf("get state entry: %w", err)
	}
	objKey := entryKey(key, id)
	e, err := s.readEntry(ctx, objKey, key)
	if errors.Is(err, ErrNotFound) {
		// Recorded with others, or not at all.
		dir := stateDir(key)
		names, err := s.batchNames(ctx, dir)
		if err == nil && len(names) > 0 {
			if names, err = s.batchesHolding(ctx, dir, names, id); err == nil {
				var batched map[string]StateEntry
				if batched, err = s.readBatchesOf(ctx, dir, names, releaseScope(key.Project, key.Workspace), func(e string) bool { return e == id }); err == nil {
					e, ok := batched[id]
					return e, ok, nil
				}
			}
		}
		if err != nil {
			return StateEntry{}, false, fmt.Errorf("get state entry %s of %s: %w", id, key, err)
		}
		return StateEntry{}, false, nil
	}
	if err != nil {
		return StateEntry{}, false, fmt.Errorf("get state entry %s of %s: %w", id, key, err)
	}
	if e.ID != id {
		return StateEntry{}, false, fmt.Errorf("get state entry %s of %s: %s holds %q", id, key, s.d.Where(objKey), e.ID)
	}
	return e, true, nil
}

func (s *Store) readEntry(ctx context.Context, objKey string, key ReleaseKey) (StateEntry, error) {
	data, _, err := s.d.Read(ctx, objKey)
	if err != nil {
		return StateEntry{}, err
	}
	e, err := decodeEntry(s.d.Where(objKey), data)
	if err != nil {
		return e, err
	}
	return e, s.openResource(e.Resource, s.d.Where(objKey), releaseScope(key.Project, key.Workspace))
}

// ListStateEntries returns every entry of the release by resource ID, those
// recorded alone over batched ones; a release without entries gives an empty
// map. Entries are read a bounded number at a time.
func (s *Store) ListStateEntries(ctx context.Context, key ReleaseKey) (map[string]StateEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("list state entries: %w", err)
	}
	dir := stateDir(key)
	ents, err := s.d.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list state entries of %s: %w", key, err)
	}
	var names, batches []string
	for _, e := range ents {
		switch {
		case e.Dir:
		case isEntryName(e.Name):
			names = append(names, e.Name)
		case isBatchName(e.Name):
			batches = append(batches, e.Name)
		}
	}
	out, err := s.readBatches(ctx, dir, batches, releaseScope(key.Project, key.Workspace))
	if err != nil {
		return nil, fmt.Errorf("list state entries of %s: %w", key, err)
	}
	var mu sync.Mutex
	err = forEach(ctx, len(names), func(ctx context.Context, i int) error {
		e, err := s.readEntry(ctx, dir+"/"+names[i], key)
		if errors.Is(err, ErrNotFound) {
			return nil // cleared meanwhile
		}
		if err != nil {
			return err
		}
		mu.Lock()
		out[e.ID] = e
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list state entries of %s: %w", key, err)
	}
	return out, nil
}

// isEntryName accepts the names PutStateEntry writes; anything else in a state
// directory (a writer's temporary file, something written by hand) is not an entry.
func isEntryName(name string) bool {
	hash, ok := strings.CutSuffix(name, ".json")
	return ok && validHash(hash)
}

// ClearStateEntries drops every entry of the release; clearing a release without
// entries is no error.
func (s *Store) ClearStateEntries(ctx context.Context, key ReleaseKey) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := key.Validate(); err != nil {
		return fmt.Errorf("clear state entries: %w", err)
	}
	if err := s.d.DeleteAll(ctx, stateDir(key)); err != nil {
		return fmt.Errorf("clear state entries of %s: %w", key, err)
	}
	return nil
}
