package release_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// fakeRuntime is the in-memory runtime every runtime conformance test runs
// against, handed out for every resource type.
type fakeRuntime struct{ *memory.Runtime }

func newFakeRuntime() *fakeRuntime { return &fakeRuntime{memory.New()} }

func (f *fakeRuntime) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return f.Runtime, nil
}

func (f *fakeRuntime) has(id string) bool {
	_, ok := f.Object(id)
	return ok
}

// object is the live attributes of id in rt (nil when absent).
func object(rt *fakeRuntime, id string) map[string]any {
	attrs, _ := rt.Object(id)
	return attrs
}

// withRuntime returns a Manager over b whose runtime is a fresh fake.
func withRuntime(b backend.Backend) (*release.Manager, *fakeRuntime) {
	rt := newFakeRuntime()
	return release.New(b, rt, &runs{}), rt
}

// runs says which runs are alive: a run not listed has ended, one marked
// unknown is not in this Temporal at all.
type runs struct {
	mu      sync.Mutex
	alive   map[string]bool
	unknown map[string]bool
}

func (r *runs) Running(_ context.Context, _, runID string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unknown[runID] {
		return false, fmt.Errorf("run %s: %w", runID, release.ErrRunUnknown)
	}
	return r.alive[runID], nil
}

// QueuedSpecs: no run queue here.
func (r *runs) QueuedSpecs(context.Context) ([]string, error) { return nil, nil }

func (r *runs) setUnknown(runID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unknown == nil {
		r.unknown = map[string]bool{}
	}
	r.unknown[runID] = true
}

func (r *runs) set(runID string, alive bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.alive == nil {
		r.alive = map[string]bool{}
	}
	r.alive[runID] = alive
}
