package release

import (
	"context"

	"github.com/kumoproj/kumo/engine"
)

// Compensate undoes what a failed apply did to one resource: a created
// resource is deleted, an updated or deleted one is applied again as the prior
// state recorded it. The state entry follows, so the release records the
// cluster as it is after the undo.
func (m *Manager) Compensate(ctx context.Context, in Node, action engine.Action) error {
	if action == engine.Adopt {
		// The apply changed nothing but who manages the object: leave it.
		return nil
	}
	if action == engine.Create {
		_, res, err := m.desired(ctx, in)
		if err != nil {
			return err
		}
		return m.deleteAndWait(ctx, m.recordNow(in.Key), in, res)
	}
	prior, err := m.priorResource(ctx, in)
	if err != nil {
		return err
	}
	if prior == nil {
		return kindf(ErrResourceFailed, "cannot restore %s: it is not in the prior state", in.ID)
	}
	rt, err := m.runtime(prior.Type, in.Settings)
	if err != nil {
		return err
	}
	desired, err := m.restoreTarget(ctx, in, prior)
	if err != nil {
		return err
	}
	if desired, err = m.withRecordedState(ctx, in, desired); err != nil {
		return err
	}
	// Restoring what kumo recorded: its own fields.
	_, err = m.applyAndRecord(ctx, m.recordNow(in.Key), in, rt, desired, prior.DependsOn, true)
	return err
}
