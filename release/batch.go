package release

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kumoproj/kumo/backend"
)

// Outcome is what the step of one resource of a batch did.
type Outcome struct {
	ID string
	// Apply is an applied resource's result (whether its node still waits
	// for health); zero for a delete.
	Apply ApplyResult
	// Took is how long the step ran.
	Took time.Duration
}

// Batch flushing: the outcomes of a batch are written together, every
// flushEvery resources or flushAfter after the first unwritten one, whichever
// comes first, and at the end. A crash re-does at most the resources since the
// last flush (each step is idempotent).
const (
	flushEvery = 25
	flushAfter = 500 * time.Millisecond
)

// ErrStopped ends a Batch whose context was cancelled between two resources.
var ErrStopped = errors.New("stopped")

// RecordBatch stores several resources' outcomes in an unfinished release in
// one write. Recording the same entries again changes nothing.
func (m *Manager) RecordBatch(ctx context.Context, key backend.ReleaseKey, entries []backend.StateEntry) error {
	return m.backend.PutStateEntries(ctx, key, entries)
}

// Batch runs the steps of nodes one after another: Apply, or Delete for a
// node with Delete set. done are the outcomes an earlier attempt of the same
// batch recorded (its first len(done) nodes), which are not run again. The
// outcomes are recorded in one write per flush, and flushed is called with
// every outcome recorded so far after each flush (to heartbeat them).
//
// A cancelled ctx stops the batch between two resources, never during one: a
// step runs on a context the cancel does not reach. Batch returns the outcomes
// of the nodes done, in order, and the error that stopped it: the failure of
// the node after the last outcome, or ErrStopped. Everything done is recorded
// before it returns, whatever the error.
func (m *Manager) Batch(ctx context.Context, nodes []Node, done []Outcome, flushed func([]Outcome)) ([]Outcome, error) {
	if len(done) > len(nodes) {
		return nil, kindf(ErrInvalid, "batch of %d resources: %d already done", len(nodes), len(done))
	}
	for i, o := range done {
		if o.ID != nodes[i].ID {
			return nil, kindf(ErrInvalid, "batch: resource %d is %s, the earlier attempt did %s", i, nodes[i].ID, o.ID)
		}
	}
	out := append([]Outcome(nil), done...)
	var pending []backend.StateEntry
	recorded := len(out)
	var since time.Time
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if err := m.RecordBatch(context.WithoutCancel(ctx), nodes[0].Key, pending); err != nil {
			return err
		}
		pending, recorded = nil, len(out)
		if flushed != nil {
			flushed(out[:recorded:recorded])
		}
		return nil
	}
	// A step's entry waits in pending. A step that failed may still have
	// left an entry (an object applied, then a failed record): it is flushed
	// with the rest.
	rec := func(_ context.Context, e backend.StateEntry) error {
		for i := range pending {
			if pending[i].ID == e.ID {
				pending[i] = e
				return nil
			}
		}
		if len(pending) == 0 {
			since = time.Now()
		}
		pending = append(pending, e)
		return nil
	}
	var stepErr error
	for _, in := range nodes[len(done):] {
		if ctx.Err() != nil {
			stepErr = ErrStopped
			break
		}
		if in.Key != nodes[0].Key {
			stepErr = kindf(ErrInvalid, "batch: %s is of release %s, not %s", in.ID, in.Key, nodes[0].Key)
			break
		}
		start := time.Now()
		step := context.WithoutCancel(ctx)
		var res ApplyResult
		var err error
		if in.Delete {
			err = m.delete(step, in, rec)
		} else {
			res, err = m.apply(step, in, rec)
		}
		if err != nil {
			stepErr = err
			break
		}
		out = append(out, Outcome{ID: in.ID, Apply: res, Took: time.Since(start)})
		if len(pending) >= flushEvery || time.Since(since) >= flushAfter {
			if err := flush(); err != nil {
				return out[:recorded], fmt.Errorf("record %d resources: %w", len(pending), err)
			}
		}
	}
	if err := flush(); err != nil {
		return out[:recorded], errors.Join(stepErr, fmt.Errorf("record %d resources: %w", len(pending), err))
	}
	return out, stepErr
}
