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
	return m.delete(ctx, in, m.recordNow(in.Key))
}

func (m *Manager) delete(ctx context.Context, in Node, rec record) error {
	wait, err := m.startDelete(ctx, in, rec)
	return finishDelete(ctx, rec, in, wait, err)
}

// startDelete issues the delete of one recorded resource. A nil wait: the
// resource is gone and its tombstone recorded. Else it is still going (its
// runtime waits apart, runtime.DeleteStarter): wait returns once it is gone,
// and the caller records the tombstone then.
func (m *Manager) startDelete(ctx context.Context, in Node, rec record) (wait func(context.Context) error, _ error) {
	prior, err := m.priorResource(ctx, in)
	if err != nil {
		return nil, err
	}
	if prior == nil {
		return nil, kindf(ErrInvalid, "resource %s is not in the prior state", in.ID)
	}
	return m.startDeleteAndRecord(ctx, rec, in, prior)
}

// deleteAndRecord deletes res, waiting until it is gone, and records a tombstone.
func (m *Manager) deleteAndRecord(ctx context.Context, rec record, in Node, res *engine.Resource) error {
	wait, err := m.startDeleteAndRecord(ctx, rec, in, res)
	return finishDelete(ctx, rec, in, wait, err)
}

// finishDelete waits for a started delete still going and records its
// tombstone.
func finishDelete(ctx context.Context, rec record, in Node, wait func(context.Context) error, err error) error {
	if err != nil || wait == nil {
		return err
	}
	if err := wait(ctx); err != nil {
		return err
	}
	return tombstone(ctx, rec, in)
}

// startDeleteAndRecord is startDelete of res.
func (m *Manager) startDeleteAndRecord(ctx context.Context, rec record, in Node, res *engine.Resource) (func(context.Context) error, error) {
	rt, err := m.runtime(res.Type, in.Settings)
	if err != nil {
		return nil, err
	}
	if res, err = m.withRecordedState(ctx, in, res); err != nil {
		return nil, err
	}
	var wait func(context.Context) error
	if ds, ok := rt.(runtime.DeleteStarter); ok {
		wait, err = ds.StartDelete(ctx, res)
	} else {
		err = rt.Delete(ctx, res)
	}
	if err != nil {
		return nil, nodeError(err)
	}
	if wait != nil {
		return func(ctx context.Context) error { return nodeError(wait(ctx)) }, nil
	}
	return nil, tombstone(ctx, rec, in)
}

// tombstone records that in's resource is gone.
func tombstone(ctx context.Context, rec record, in Node) error {
	return rec(ctx, backend.StateEntry{ID: in.ID, Deleted: true})
}
