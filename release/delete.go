package release

import (
	"context"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// Delete removes one recorded resource, waits until it is gone, and records a
// tombstone. Deleting what is already gone succeeds.
func (m *Manager) Delete(ctx context.Context, in Node) error {
	prior, err := m.recordedToDelete(ctx, in)
	if err != nil {
		return err
	}
	return m.deleteAndWait(ctx, m.recordNow(in.Key), in, prior)
}

// recordedToDelete is in's resource as the prior state recorded it: only a
// resource kumo recorded is deleted by a run.
func (m *Manager) recordedToDelete(ctx context.Context, in Node) (*engine.Resource, error) {
	prior, err := m.priorResource(ctx, in)
	if err != nil {
		return nil, err
	}
	if prior == nil {
		return nil, kindf(ErrInvalid, "resource %s is not in the prior state", in.ID)
	}
	return prior, nil
}

// startRecordedDelete issues the delete of in's resource as the prior
// state recorded it (startDelete): a step of Batch or Pool.
func (m *Manager) startRecordedDelete(ctx context.Context, rec record, in Node) (wait func(context.Context) error, _ error) {
	res, err := m.recordedToDelete(ctx, in)
	if err != nil {
		return nil, err
	}
	return m.startDelete(ctx, rec, in, res)
}

// deleteAndWait deletes res, waits until it is gone, and records a tombstone.
func (m *Manager) deleteAndWait(ctx context.Context, rec record, in Node, res *engine.Resource) error {
	wait, err := m.startDelete(ctx, rec, in, res)
	if err != nil || wait == nil {
		return err
	}
	if err := wait(ctx); err != nil {
		return err
	}
	return tombstone(ctx, rec, in)
}

// startDelete issues the delete of res, in's resource. A nil wait: the
// resource is gone and its tombstone recorded. Else it is still going (its
// runtime waits apart, runtime.DeleteStarter): wait returns once it is gone,
// and the caller records the tombstone then.
func (m *Manager) startDelete(ctx context.Context, rec record, in Node, res *engine.Resource) (wait func(context.Context) error, _ error) {
	policy, err := m.deletePolicy(ctx, in, res)
	if err != nil {
		return nil, err
	}
	switch {
	case policy == engine.DeleteRetain:
		// Left live, no longer managed: the release lists it as retained.
		return nil, rec(ctx, backend.StateEntry{ID: in.ID, Deleted: true, Retained: true})
	case policy == engine.DeleteProtect && !in.AllowProtectedDelete:
		return nil, kindErr(ErrResourceFailed, &engine.ProtectedError{What: "deleting " + in.ID, IDs: []string{in.ID}})
	}
	rt, err := m.runtime(ctx, in.Key.Workspace, res.Type, in.Settings)
	if err != nil {
		return nil, err
	}
	if res, err = m.withRecordedState(ctx, in, res); err != nil {
		return nil, err
	}
	var runtimeWait func(context.Context) error
	if ds, ok := rt.(runtime.DeleteStarter); ok {
		runtimeWait, err = ds.StartDelete(ctx, res)
	} else {
		err = rt.Delete(ctx, res)
	}
	if err != nil {
		return nil, nodeError(err)
	}
	if runtimeWait != nil {
		return func(ctx context.Context) error { return nodeError(runtimeWait(ctx)) }, nil
	}
	return nil, tombstone(ctx, rec, in)
}

// tombstone records that in's resource is gone.
func tombstone(ctx context.Context, rec record, in Node) error {
	return rec(ctx, backend.StateEntry{ID: in.ID, Deleted: true})
}

// deletePolicy is the strongest delete policy of in's resource as it is to be
// deleted (res), as the prior state recorded it and as the spec has it: every
// path to a delete (prune, destroy, rollback, compensation, batches) comes
// here, so protection holds even where the plan's check (checkDeletes) did not
// look, such as undoing a create.
func (m *Manager) deletePolicy(ctx context.Context, in Node, res *engine.Resource) (engine.DeletePolicy, error) {
	prior, err := m.priorResource(ctx, in)
	if err != nil {
		return "", err
	}
	var desired *engine.Resource
	if in.SpecHash != "" {
		spec, err := m.spec(ctx, in.SpecHash)
		if err != nil {
			return "", err
		}
		desired = spec.resource(in.ID)
	}
	p, err := engine.DeletePolicyOfAll(res, prior, desired)
	if err != nil {
		return "", kindErr(ErrInvalid, err)
	}
	return p, nil
}
