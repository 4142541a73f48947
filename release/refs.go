package release

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// liveLookup returns a referenced resource's live attributes, nil when absent.
type liveLookup func(ctx context.Context, id string) (map[string]any, error)

// withRefs returns res with its references resolved through lookup. In a preview
// (skipAbsent) a reference to a resource that does not exist yet stays as
// written, and pending names that resource. A missing field is an error either
// way, as the apply would fail on it.
func withRefs(ctx context.Context, res *engine.Resource, refs []engine.Ref, lookup liveLookup, skipAbsent bool) (_ *engine.Resource, pending string, _ error) {
	if len(refs) == 0 {
		return res, "", nil
	}
	lives := map[string]map[string]any{}
	var resolvable []engine.Ref
	for _, ref := range refs {
		l, done := lives[ref.ResourceID]
		if !done {
			var err error
			if l, err = lookup(ctx, ref.ResourceID); err != nil {
				return nil, "", err
			}
			lives[ref.ResourceID] = l
		}
		switch {
		case l != nil || !skipAbsent:
			resolvable = append(resolvable, ref)
		case pending == "":
			pending = ref.ResourceID
		}
	}
	attrs, err := engine.ResolveRefs(res.Attributes, resolvable, func(id string) (map[string]any, bool) {
		l := lives[id]
		return l, l != nil
	})
	if err != nil {
		return nil, "", kindf(ErrResourceFailed, "%s: %v", res.ID, err)
	}
	out := *res
	out.Attributes = attrs
	return &out, pending, nil
}

// readLive looks references up in the infrastructure (for a preview of in).
func (m *Manager) readLive(spec *specIndex, in Node) liveLookup {
	return func(ctx context.Context, id string) (map[string]any, error) {
		rt, err := m.runtime(ctx, in.Key.Workspace, spec.resource(id).Type, in.Settings)
		if err != nil {
			return nil, err
		}
		target, err := m.withRecordedState(ctx, in, spec.resource(id))
		if err != nil {
			return nil, err
		}
		live, err := rt.Read(ctx, target)
		if errors.Is(err, runtime.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, nodeError(fmt.Errorf("read %s, referenced by %s: %w", id, in.ID, err))
		}
		if live == nil {
			return nil, nil
		}
		return live.Attributes, nil
	}
}

// readState looks references up in what this release recorded for them (their
// nodes ran before this one: references are dependency edges), or, for a
// resource this release left unchanged, in the prior state it starts from.
func (m *Manager) readState(in Node) liveLookup {
	return func(ctx context.Context, id string) (map[string]any, error) {
		res, err := m.recorded(ctx, in, id)
		if err != nil || res == nil {
			return nil, err
		}
		return res.Attributes, nil
	}
}

// recordedDeps is what state records as a resource's dependencies: the explicit
// ones plus those implied by references, so a later destroy or removal can order
// deletes without the spec that created them.
func recordedDeps(res *engine.Resource, refs []engine.Ref) []string {
	deps := slices.Clone(res.DependsOn)
	for _, ref := range refs {
		if !slices.Contains(deps, ref.ResourceID) {
			deps = append(deps, ref.ResourceID)
		}
	}
	return deps
}
