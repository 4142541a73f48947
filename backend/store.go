package backend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// Store is the portable Backend over a Driver: it checks every argument (names
// with ValidateName, nil records, spec hashes) and the context before the driver
// is called, encodes and decodes records, keeps revisions gapless (from the
// floor, store_floor.go), and turns the driver's errors into ones that say which
// record they concern and wrap ErrNotFound, ErrRevisionExists, ErrExists or
// ErrConflict. It is safe for concurrent use when its driver is.
type Store struct {
	d       Driver
	sealer  Sealer // nil: sensitive values are stored in clear
	written atomic.Int64
	seen    seenReleases
	batches batchIndex
}

var _ Backend = (*Store)(nil)

// NewStore returns the Backend that keeps its records in d.
func NewStore(d Driver) *Store { return &Store{d: d} }

// BytesWritten is how many bytes this Store has handed to its driver to write,
// overwrites included: the figure that must stay linear in the size of an apply.
func (s *Store) BytesWritten() int64 { return s.written.Load() }

// read returns what key holds, for the record named what: a missing one gives
// "<what>: not found", wrapping ErrNotFound.
func (s *Store) read(ctx context.Context, key, what string) ([]byte, string, error) {
	data, version, err := s.d.Read(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return nil, "", fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", what, err)
	}
	return data, version, nil
}

func (s *Store) write(ctx context.Context, key string, data []byte, cond Condition) (string, error) {
	s.written.Add(int64(len(data)))
	return s.d.Write(ctx, key, data, cond)
}

// validateWorkspace checks the names of a project/workspace pair.
func validateWorkspace(project, workspace string) error {
	if err := ValidateName("project", project); err != nil {
		return err
	}
	return ValidateName("workspace", workspace)
}

// fetchLimit bounds the driver calls one listing makes at once.
const fetchLimit = 16

// forEach runs fn for 0..n-1, fetchLimit at a time, and returns the first error.
func forEach(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchLimit)
	for i := range n {
		g.Go(func() error { return fn(gctx, i) })
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// seenReleases remembers a few releases known to exist, so that recording each
// resource of a running release does not ask the driver again. Releases are
// removed only under the floor, never the latest nor a running one's prior
// (history.go), and Collect forgets those it removes; so at worst another
// Store remembers a removed revision no run writes to any more. It is
// bounded: it forgets everything when full.
type seenReleases struct {
	mu   sync.Mutex
	keys map[ReleaseKey]struct{}
}

const seenLimit = 256

func (s *seenReleases) add(k ReleaseKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil || len(s.keys) >= seenLimit {
		s.keys = map[ReleaseKey]struct{}{}
	}
	s.keys[k] = struct{}{}
}

func (s *seenReleases) has(k ReleaseKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.keys[k]
	return ok
}

func (s *seenReleases) forget(k ReleaseKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, k)
}
