package backend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// stateBatch is what PutStateEntries stores: the entries of several resources
// in one object, so a step that finishes many resources writes once. Seq
// orders batches that hold the same resource (a retried step that did it
// again): the highest wins.
type stateBatch struct {
	Seq     int64        `json:"seq"`
	Entries []StateEntry `json:"entries"`
}

// batchExt ends the name of a batch object in a state directory.
const batchExt = ".batch" + jsonExt

// batchName names the batch holding exactly ids: a retry that writes the same
// resources again replaces it instead of adding another object.
func batchName(entries []StateEntry) string {
	h := sha256.New()
	for _, e := range entries {
		h.Write([]byte(e.ID))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)) + batchExt
}

func isBatchName(name string) bool {
	hash, ok := strings.CutSuffix(name, batchExt)
	return ok && validHash(hash)
}

// PutStateEntries records the outcomes of several resources of a release in
// one write. An entry recorded alone (PutStateEntry) wins over a batched one
// for the same resource: a resource is batched when its step ran, and recorded
// alone only after that (an undo). The release must exist (else ErrNotFound);
// no entry may have an empty ID or appear twice. No entries: nothing written.
func (s *Store) PutStateEntries(ctx context.Context, key ReleaseKey, entries []StateEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := key.Validate(); err != nil {
		return fmt.Errorf("put state entries: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if e.ID == "" {
			return fmt.Errorf("put state entries of %s: a resource ID is empty", key)
		}
		if seen[e.ID] {
			return fmt.Errorf("put state entries of %s: %s appears twice", key, e.ID)
		}
		seen[e.ID] = true
	}
	what := fmt.Sprintf("%d state entries (%s, ...) of %s", len(entries), entries[0].ID, key)
	ok, err := s.releaseExists(ctx, key)
	if err != nil {
		return fmt.Errorf("put %s: %w", what, err)
	}
	if !ok {
		return fmt.Errorf("put %s: release %w", what, ErrNotFound)
	}
	// Sealed copies: the caller's entries keep their values in clear.
	sealed := make([]StateEntry, len(entries))
	sc := releaseScope(key.Project, key.Workspace)
	for i, e := range entries {
		if e.Resource != nil {
			r, err := s.sealResource(*e.Resource, sc)
			if err != nil {
				return fmt.Errorf("put %s: encrypt sensitive values of %s: %w", what, e.ID, err)
			}
			e.Resource = &r
		}
		sealed[i] = e
	}
	data, err := encodeCompressed(stateBatch{Seq: time.Now().UnixNano(), Entries: sealed})
	if err != nil {
		return fmt.Errorf("put %s: encode: %w", what, err)
	}
	if _, err := s.write(ctx, stateDir(key)+"/"+batchName(entries), data, Condition{}); err != nil {
		return fmt.Errorf("put %s: %w", what, err)
	}
	return nil
}

// readBatches reads the batch objects among names (in dir) and returns, per
// resource, the entry of the newest batch holding it.
func (s *Store) readBatches(ctx context.Context, dir string, names []string, sc sealScope) (map[string]StateEntry, error) {
	return s.readBatchesOf(ctx, dir, names, sc, nil)
}

// readBatchesOf is readBatches keeping only the entries of the resources
// want (nil: all) reports true for: the others are neither opened nor kept.
func (s *Store) readBatchesOf(ctx context.Context, dir string, names []string, sc sealScope, want func(id string) bool) (map[string]StateEntry, error) {
	type found struct {
		seq int64
		e   StateEntry
	}
	newest := map[string]found{}
	var mu sync.Mutex
	err := forEach(ctx, len(names), func(ctx context.Context, i int) error {
		objKey := dir + "/" + names[i]
		var b stateBatch
		if ok, err := s.readBatch(ctx, objKey, &b); !ok {
			return err
		}
		if want != nil {
			b.Entries = slices.DeleteFunc(b.Entries, func(e StateEntry) bool { return !want(e.ID) })
		}
		for _, e := range b.Entries {
			if err := s.openResource(e.Resource, s.d.Where(objKey), sc); err != nil {
				return err
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, e := range b.Entries {
			normalizeResource(e.Resource)
			if f, ok := newest[e.ID]; !ok || b.Seq > f.seq {
				newest[e.ID] = found{b.Seq, e}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]StateEntry, len(newest))
	for id, f := range newest {
		out[id] = f.e
	}
	return out, nil
}

// readBatch decodes the batch object at objKey into b (a stateBatch, or a
// part of one); ok is false when it is gone (cleared meanwhile) or on error.
func (s *Store) readBatch(ctx context.Context, objKey string, b any) (ok bool, _ error) {
	data, _, err := s.d.Read(ctx, objKey)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := decodeStored(data, b); err != nil {
		return false, fmt.Errorf("decode %s: %w", s.d.Where(objKey), err)
	}
	return true, nil
}

// batchNames lists the batch objects of a release's state directory.
func (s *Store) batchNames(ctx context.Context, dir string) ([]string, error) {
	ents, err := s.d.List(ctx, dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.Dir && isBatchName(e.Name) {
			names = append(names, e.Name)
		}
	}
	return names, nil
}
