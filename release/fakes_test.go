package release_test

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// fakeRuntime keeps objects in memory; reject names IDs whose apply fails for good.
type fakeRuntime struct {
	mu      sync.Mutex
	objects map[string]map[string]any
	applies int
	reject  map[string]bool
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{objects: map[string]map[string]any{}, reject: map[string]bool{}}
}

func (f *fakeRuntime) Apply(_ context.Context, r *engine.Resource, opts runtime.ApplyOptions) (*engine.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reject[r.ID] && !opts.DryRun {
		return nil, runtime.Permanent(fmt.Errorf("apply %s: rejected", r.ID))
	}
	out := *r
	out.Attributes = engine.Normalize(r.Attributes).(map[string]any)
	if !opts.DryRun {
		f.objects[r.ID] = out.Attributes
		f.applies++
	}
	return &out, nil
}

func (f *fakeRuntime) Read(_ context.Context, r *engine.Resource) (*engine.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	attrs, ok := f.objects[r.ID]
	if !ok {
		return nil, nil
	}
	out := *r
	out.Attributes = maps.Clone(attrs)
	return &out, nil
}

func (f *fakeRuntime) Delete(_ context.Context, r *engine.Resource) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.objects, r.ID)
	return nil
}

func (f *fakeRuntime) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return f, nil
}

func (f *fakeRuntime) has(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.objects[id]
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
