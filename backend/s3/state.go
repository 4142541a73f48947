package s3

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/internal/codec"
)

// statePrefix is the "directory" of a release's state entries, ending in "/".
func (b *Backend) statePrefix(k backend.ReleaseKey) string {
	return b.key(releasesDir, k.Project, k.Workspace, strconv.Itoa(k.Revision)+stateExt) + "/"
}

// PutStateEntry records one resource's outcome for a release, replacing any earlier
// entry for the same ID. The release must exist (else backend.ErrNotFound). It
// writes one small object, so an apply writes bytes linear in its size.
func (b *Backend) PutStateEntry(ctx context.Context, key backend.ReleaseKey, entry backend.StateEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := key.Validate(); err != nil {
		return fmt.Errorf("put state entry: %w", err)
	}
	if entry.ID == "" {
		return fmt.Errorf("put state entry of %s: resource ID is empty", key)
	}
	if !b.seen.has(key) {
		_, ok, err := b.head(ctx, b.releaseKey(key))
		if err != nil {
			return fmt.Errorf("put state entry %s of %s: %w", entry.ID, key, err)
		}
		if !ok {
			return fmt.Errorf("put state entry %s of %s: release %w", entry.ID, key, backend.ErrNotFound)
		}
		b.seen.add(key)
	}
	data, err := codec.EncodeJSON(entry)
	if err != nil {
		return fmt.Errorf("put state entry %s of %s: encode: %w", entry.ID, key, err)
	}
	if _, err := b.put(ctx, b.statePrefix(key)+codec.EntryName(entry.ID), data, condition{}); err != nil {
		return fmt.Errorf("put state entry %s of %s: %w", entry.ID, key, err)
	}
	return nil
}

// GetStateEntry returns the entry for id, and whether there is one.
func (b *Backend) GetStateEntry(ctx context.Context, key backend.ReleaseKey, id string) (backend.StateEntry, bool, error) {
	if err := ctx.Err(); err != nil {
		return backend.StateEntry{}, false, err
	}
	if err := key.Validate(); err != nil {
		return backend.StateEntry{}, false, fmt.Errorf("get state entry: %w", err)
	}
	e, err := b.readEntry(ctx, b.statePrefix(key)+codec.EntryName(id))
	if errors.Is(err, errNoObject) {
		return backend.StateEntry{}, false, nil
	}
	if err != nil {
		return backend.StateEntry{}, false, fmt.Errorf("get state entry %s of %s: %w", id, key, err)
	}
	if e.ID != id {
		return backend.StateEntry{}, false, fmt.Errorf("get state entry %s of %s: %s holds %q", id, key, b.where(b.statePrefix(key)+codec.EntryName(id)), e.ID)
	}
	return e, true, nil
}

func (b *Backend) readEntry(ctx context.Context, objKey string) (backend.StateEntry, error) {
	data, _, err := b.get(ctx, objKey)
	if err != nil {
		return backend.StateEntry{}, err
	}
	return codec.DecodeEntry(b.where(objKey), data)
}

// ListStateEntries returns every entry of the release by resource ID; a release
// without entries gives an empty map. Keys are listed page by page and each page's
// entries fetched a bounded number at a time, so only the entries themselves are
// held in memory.
func (b *Backend) ListStateEntries(ctx context.Context, key backend.ReleaseKey) (map[string]backend.StateEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("list state entries: %w", err)
	}
	out := map[string]backend.StateEntry{}
	var mu sync.Mutex
	var page []string
	fetch := func() error {
		err := forEach(ctx, len(page), func(ctx context.Context, i int) error {
			e, err := b.readEntry(ctx, page[i])
			if errors.Is(err, errNoObject) {
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
		page = page[:0]
		return err
	}
	prefix := b.statePrefix(key)
	err := b.list(ctx, prefix, "", func(k string, _ bool) error {
		if !isEntryName(strings.TrimPrefix(k, prefix)) {
			return nil
		}
		page = append(page, k)
		if len(page) == 1000 {
			return fetch()
		}
		return nil
	})
	if err == nil {
		err = fetch()
	}
	if err != nil {
		return nil, fmt.Errorf("list state entries of %s: %w", key, err)
	}
	return out, nil
}

// isEntryName accepts the names PutStateEntry writes; anything else under the
// prefix (written by hand or by another tool) is not an entry.
func isEntryName(name string) bool {
	hash, ok := strings.CutSuffix(name, ".json")
	return ok && codec.ValidHash(hash)
}

// ClearStateEntries drops every entry of the release; clearing a release without
// entries is no error. It deletes whatever it lists, so a clear interrupted half-way
// is finished by the next one (FinishRelease clears again after a crash).
func (b *Backend) ClearStateEntries(ctx context.Context, key backend.ReleaseKey) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := key.Validate(); err != nil {
		return fmt.Errorf("clear state entries: %w", err)
	}
	var keys []string
	err := b.list(ctx, b.statePrefix(key), "", func(k string, _ bool) error {
		keys = append(keys, k)
		return nil
	})
	if err == nil {
		err = b.deleteKeys(ctx, keys)
	}
	if err != nil {
		return fmt.Errorf("clear state entries of %s: %w", key, err)
	}
	return nil
}
