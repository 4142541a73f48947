package release

import (
	"context"
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/notify"
	"github.com/kumoproj/kumo/engine/planpolicy"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// Runtimes hands out the Runtime for a resource type under the given settings.
type Runtimes interface {
	For(typ engine.Type, settings runspec.RuntimeSettings) (runtime.Runtime, error)
}

// RunChecker tells whether a run is still running, so a release left in a
// non-final phase by a live run is not taken over. A run its Temporal does not
// know is neither: Running then returns an error wrapping ErrRunUnknown.
type RunChecker interface {
	Running(ctx context.Context, workflowID, runID string) (bool, error)
	// QueuedSpecs are the specs of the runs waiting in the stacks' run
	// queues: stored, and needed, though no release names them yet.
	QueuedSpecs(ctx context.Context) ([]string, error)
}

// Manager runs release steps against one backend. It caches parsed specs and
// final releases (both immutable), so it is meant to live as long as a worker.
type Manager struct {
	backend  backend.Backend
	runtimes Runtimes
	runs     RunChecker

	specs  cache[string, *specIndex]
	priors cache[backend.ReleaseKey, *prior]
	// plans holds the plans PlanGraph made lately: a large plan is handed
	// out in pages (PlanPage), each of them a call of its own.
	plans cache[PlanInput, Plan]
	// hosts holds the provider hosts workspaces' releases applied lately
	// (allowedProviders).
	hosts hostsInUse
	// generation is the operator's policy for generating (SetGeneration).
	generation generate.Policy
	// events is the operator's event configuration (SetEvents).
	events notify.Operator
	// policies are the operator's server-wide plan policies (SetPolicies).
	policies *planpolicy.Set
	// secretReaders read the secret stores workspaces configure (withSecrets).
	secretReaders secretReaders
}

// maxCachedResources bounds the resources each of a Manager's caches holds
// (specs, releases, plans): a run of 50,000 resources needs its spec and its
// prior release at hand, not those of every run before it. A larger value
// is still kept, alone.
const maxCachedResources = 50_000

// New returns a Manager over a backend, the runtimes resources are applied with
// (nil when only lifecycle steps are used) and a run checker.
func New(b backend.Backend, r Runtimes, runs RunChecker) *Manager {
	return &Manager{backend: b, runtimes: r, runs: runs,
		specs: newCache[string](8, maxCachedResources, func(s *specIndex) int { return len(s.Resources) }),
		priors: newCache[backend.ReleaseKey](8, maxCachedResources, func(p *prior) int {
			if p.rel.State == nil {
				return 0
			}
			return len(p.rel.State.Resources)
		}),
		plans: newCache[PlanInput](4, maxCachedResources, func(p Plan) int { return len(p.Nodes) }),
	}
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
	refs, errs := s.AllRefs()
	for i := range s.Resources {
		x.refs[s.Resources[i].ID] = refs[i]
	}
	x.refsErr = errors.Join(errs...)
	return x
}

// resource returns the resource with id, or nil.
func (x *specIndex) resource(id string) *engine.Resource { return x.byID[id] }

// refsOf returns the references of one resource of the spec.
func (x *specIndex) refsOf(id string) ([]engine.Ref, error) {
	if x.refsErr != nil {
		return nil, kindErr(ErrInvalid, x.refsErr)
	}
	return x.refs[id], nil
}

// spec loads a spec by hash. Specs are immutable, so every node of a run shares one
// parsed and indexed copy instead of re-reading the spec per node (which would be N²).
func (m *Manager) spec(ctx context.Context, hash string) (*specIndex, error) {
	if s, ok := m.specs.get(hash); ok {
		return s, nil
	}
	s, err := m.backend.GetSpec(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("load spec %s: %w", shortHash(hash), err)
	}
	// Every activity reads its spec here, so a spec stored by any client (or
	// started by a raw Temporal client, bypassing the CLI's validation) holding
	// a sealed value is refused before the value is used anywhere.
	if errs := s.CheckNoSealed(); len(errs) > 0 {
		return nil, kindErr(ErrInvalid, fmt.Errorf("spec %s: %w", shortHash(hash), errors.Join(errs...)))
	}
	x := newSpecIndex(s)
	m.specs.put(hash, x)
	return x, nil
}

// priorRelease loads the final release a run compares against (revision 0: none).
// Final releases never change, so they are cached like specs.
func (m *Manager) priorRelease(ctx context.Context, project, workspace string, revision int) (*engine.Release, error) {
	p, err := m.prior(ctx, project, workspace, revision)
	if p == nil {
		return nil, err
	}
	return p.rel, err
}

// prior is priorRelease with its state indexed (final releases only: they
// are the ones cached).
func (m *Manager) prior(ctx context.Context, project, workspace string, revision int) (*prior, error) {
	if revision == 0 {
		return nil, nil
	}
	key := backend.ReleaseKey{Project: project, Workspace: workspace, Revision: revision}
	if p, ok := m.priors.get(key); ok {
		return p, nil
	}
	r, err := m.backend.GetRelease(ctx, project, workspace, revision)
	if err != nil {
		return nil, fmt.Errorf("load prior release: %w", err)
	}
	if !r.Phase.Final() {
		return &prior{rel: r}, nil
	}
	p := indexedPrior(r)
	m.priors.put(key, p)
	return p, nil
}

func shortHash(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}
