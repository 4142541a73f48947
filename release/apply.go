package release

import (
	"context"
	"errors"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// Apply applies one desired resource, its references resolved from the
// live results this release recorded for them, and records the result. The
// result says whether the node still has to wait for the resource's health
// (see Wait), judged from the applied object: a kind that is healthy once
// applied (a ConfigMap) needs no wait at all.
func (m *Manager) Apply(ctx context.Context, in Node) (ApplyResult, error) {
	return m.apply(oneStep(ctx), in, m.recordNow(in.Key))
}

func (m *Manager) apply(ctx context.Context, in Node, rec record) (ApplyResult, error) {
	spec, res, err := m.desired(ctx, in)
	if err != nil {
		return ApplyResult{}, err
	}
	policy, err := m.waitPolicy(ctx, in, res)
	if err != nil {
		return ApplyResult{}, err
	}
	refs, err := spec.refsOf(res.ID)
	if err != nil {
		return ApplyResult{}, err
	}
	desired, _, err := withRefs(ctx, res, refs, m.readState(in), false)
	if err != nil {
		return ApplyResult{}, err
	}
	if desired, err = m.withSecrets(ctx, in, spec, desired); err != nil {
		return ApplyResult{}, err
	}
	rt, err := m.runtime(ctx, in.Key.Workspace, res.Type, in.Settings)
	if err != nil {
		return ApplyResult{}, err
	}
	if desired, err = m.withRecordedState(ctx, in, desired); err != nil {
		return ApplyResult{}, err
	}
	prior, err := m.priorResource(ctx, in)
	if err != nil {
		return ApplyResult{}, err
	}
	if desired, err = m.respectIgnored(ctx, in, rt, desired, nil); err != nil {
		return ApplyResult{}, err
	}
	live, err := m.applyAndRecord(ctx, rec, in, rt, desired, recordedDeps(res, refs), force(in, prior))
	if err != nil {
		return ApplyResult{}, err
	}
	return waitAfterApply(rt, live, policy), nil
}

// applyAndRecord applies desired and records the result. A failed apply
// that left something behind (a tainted object) is recorded too, so the next
// attempt continues from it instead of creating another object.
func (m *Manager) applyAndRecord(ctx context.Context, rec record, in Node, rt runtime.Runtime, desired *engine.Resource, deps []string, force bool) (*engine.Resource, error) {
	live, err := rt.Apply(ctx, desired, runtime.ApplyOptions{ForceConflicts: force})
	if live != nil {
		live.DependsOn = deps
		// Also when the run was cancelled: the object exists either way.
		if perr := rec(context.WithoutCancel(ctx), backend.StateEntry{ID: in.ID, Resource: live}); perr != nil && err == nil {
			return live, perr
		}
	}
	return live, nodeError(err)
}

// respectIgnored is desired with the fields its workspace's ignore rules
// (drift.ignore, as stored) select kept as they are live
// (drift.Config.RespectIgnored): a preview shows no change there and an
// apply leaves them. live is the object as read (nil: read it here, only
// when a rule selects the resource, so an apply without rules reads
// nothing more; read again with its managedFields when a rule names field
// managers).
func (m *Manager) respectIgnored(ctx context.Context, in Node, rt runtime.Runtime, desired, live *engine.Resource) (*engine.Resource, error) {
	if desired.Type != engine.Kubernetes {
		return desired, nil
	}
	ws, err := m.storedWorkspace(ctx, in.Key.Workspace)
	if err != nil {
		return nil, err
	}
	rules := ws.Drift
	selected, byManager := rules.Selects(desired.ID, string(desired.Type))
	if !selected {
		return desired, nil
	}
	if mr, ok := rt.(runtime.ManagedReader); ok && byManager {
		live, err = mr.ReadManaged(ctx, desired)
	} else if live == nil {
		live, err = rt.Read(ctx, desired)
	}
	if err != nil || live == nil {
		if errors.Is(err, runtime.ErrNotFound) || err == nil {
			return desired, nil
		}
		return nil, nodeError(err)
	}
	out := *desired
	out.Attributes = rules.RespectIgnored(desired.ID, string(desired.Type), desired.Attributes, live.Attributes)
	return &out, nil
}
