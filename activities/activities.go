package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// Activities carries what every activity needs. Register a *Activities with a worker.
type Activities struct {
	backend  backend.Backend
	runtimes Runtimes
	runs     RunChecker

	specs  cache[string, *specIndex]
	priors cache[backend.ReleaseKey, *engine.Release]
}

// Runtimes hands out the Runtime for a resource type under the given settings.
type Runtimes interface {
	For(typ engine.Type, settings RuntimeSettings) (runtime.Runtime, error)
}

// RuntimeSettings say where a run's resources live (from the workspace, overridden by
// CLI flags). Empty values mean the worker's defaults.
type RuntimeSettings struct {
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	// TerraformBinary is "terraform", "tofu" or a path (default: terraform on PATH).
	TerraformBinary string `json:"terraformBinary,omitempty"`
	// TerraformPluginDir is a provider filesystem mirror for offline installs.
	TerraformPluginDir string `json:"terraformPluginDir,omitempty"`
}

// RunChecker tells whether a Temporal run is still running, so a release left in a
// non-final phase by a live run is not taken over.
type RunChecker interface {
	Running(ctx context.Context, workflowID, runID string) (bool, error)
}

// New returns the activities over a backend, the runtimes and a run checker.
func New(b backend.Backend, r Runtimes, runs RunChecker) *Activities {
	return &Activities{backend: b, runtimes: r, runs: runs, specs: newCache[string, *specIndex](8), priors: newCache[backend.ReleaseKey, *engine.Release](8)}
}

// specIndex is a parsed spec with what every node looks up in it.
type specIndex struct {
	*engine.Spec
	byID map[string]*engine.Resource
	refs map[string][]engine.Ref
	// refsErr is why references could not be parsed (the spec is invalid).
	refsErr error
}

func newSpecIndex(s *engine.Spec) *specIndex {
	x := &specIndex{Spec: s, byID: make(map[string]*engine.Resource, len(s.Resources)), refs: map[string][]engine.Ref{}}
	for i := range s.Resources {
		x.byID[s.Resources[i].ID] = &s.Resources[i]
	}
	var errs []error
	for i := range s.Resources {
		refs, err := s.Refs(&s.Resources[i])
		x.refs[s.Resources[i].ID] = refs
		if err != nil {
			errs = append(errs, err)
		}
	}
	x.refsErr = errors.Join(errs...)
	return x
}

// resource returns the resource with id, or nil.
func (x *specIndex) resource(id string) *engine.Resource { return x.byID[id] }

// refsOf returns the references of one resource of the spec.
func (x *specIndex) refsOf(id string) ([]engine.Ref, error) {
	if x.refsErr != nil {
		return nil, temporal.NewNonRetryableApplicationError(x.refsErr.Error(), ErrTypeInvalid, nil)
	}
	return x.refs[id], nil
}

// spec loads a spec by hash. Specs are immutable, so every node of a run shares one
// parsed and indexed copy instead of re-reading the spec per node (which would be N²).
func (a *Activities) spec(ctx context.Context, hash string) (*specIndex, error) {
	if s, ok := a.specs.get(hash); ok {
		return s, nil
	}
	s, err := a.backend.GetSpec(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("load spec %s: %w", shortHash(hash), err)
	}
	x := newSpecIndex(s)
	a.specs.put(hash, x)
	return x, nil
}

// priorRelease loads the final release a run compares against (revision 0: none).
// Final releases never change, so they are cached like specs.
func (a *Activities) priorRelease(ctx context.Context, project, workspace string, revision int) (*engine.Release, error) {
	if revision == 0 {
		return nil, nil
	}
	key := backend.ReleaseKey{Project: project, Workspace: workspace, Revision: revision}
	if r, ok := a.priors.get(key); ok {
		return r, nil
	}
	r, err := a.backend.GetRelease(ctx, project, workspace, revision)
	if err != nil {
		return nil, fmt.Errorf("load prior release: %w", err)
	}
	if r.Phase.Final() {
		a.priors.put(key, r)
	}
	return r, nil
}

func shortHash(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}

// cache is a tiny bounded map for immutable values; eviction is arbitrary because
// runs touch one or two entries at a time.
type cache[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]V
}

func newCache[K comparable, V any](max int) cache[K, V] {
	return cache[K, V]{max: max, m: map[K]V{}}
}

func (c *cache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *cache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = v
}
