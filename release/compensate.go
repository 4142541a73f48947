package release

import (
	"context"
	"time"

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
	rt, err := m.runtime(ctx, in.Key.Workspace, prior.Type, in.Settings)
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

// Undo is one resource of a CompensateBatch: its node, and what the failed
// apply did to it.
type Undo struct {
	Node   Node
	Action engine.Action
}

// CompensateBatch undoes the resources of a batch one after another, in
// order (Compensate each). done are the outcomes an earlier attempt of the
// same batch reported (its first len(done) undos), which are not undone
// again; undone is called with every outcome so far after each undo (to
// heartbeat them).
//
// An undo that fails for good (FailedForGood) is its resource's outcome
// (Outcome.Err) and the batch goes on: one resource left as the apply made it
// must not keep the others from being undone. Any other failure (a backend
// error) stops the batch, to be retried after the outcomes so far. A
// cancelled ctx stops the batch between two resources (ErrStopped), never
// during one: the undo in flight finishes whatever comes, as a cancelled run
// is still put back. CompensateBatch returns the outcomes of the undos done,
// in order, and the error that stopped it.
func (m *Manager) CompensateBatch(ctx context.Context, undos []Undo, done []Outcome, undone func([]Outcome)) ([]Outcome, error) {
	ids := make([]string, len(undos))
	for i, u := range undos {
		ids[i] = u.Node.ID
	}
	if err := checkResume(ids, done); err != nil {
		return nil, err
	}
	out := append([]Outcome(nil), done...)
	for _, u := range undos[len(done):] {
		if ctx.Err() != nil {
			return out, ErrStopped
		}
		start := time.Now()
		err := m.Compensate(context.WithoutCancel(ctx), u.Node, u.Action)
		o := Outcome{ID: u.Node.ID, Took: time.Since(start)}
		if err != nil {
			if !FailedForGood(err) {
				return out, err
			}
			o.Err = err
		}
		out = append(out, o)
		if undone != nil {
			undone(out[:len(out):len(out)])
		}
	}
	return out, nil
}
