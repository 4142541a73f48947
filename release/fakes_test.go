package release_test

import (
	"context"
	"sync"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
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

// runs says which runs are alive: a run not listed has ended.
type runs struct {
	mu    sync.Mutex
	alive map[string]bool
}

func (r *runs) Running(_ context.Context, _, runID string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.alive[runID], nil
}

func (r *runs) set(runID string, alive bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.alive == nil {
		r.alive = map[string]bool{}
	}
	r.alive[runID] = alive
}
