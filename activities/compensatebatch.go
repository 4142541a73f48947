package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// CompensateBatchInput names the resources of one batch of undos of a failed
// apply, undone one after another in order: Actions[k] is what the apply did
// to IDs[k]. What they share is carried once.
type CompensateBatchInput struct {
	// Node is what the resources share (its ID is unused).
	Node    NodeInput       `json:"node"`
	IDs     []string        `json:"ids"`
	Actions []engine.Action `json:"actions"`
}

// CompensateResources undoes the resources of a batch one after another
// (release.Manager.Compensate each, recorded as CompensateResource records
// it), heartbeating the outcomes so far: a retried attempt reads them back and
// goes on after them. An undo that fails for good is that resource's outcome
// (Outcome.Error) and the batch goes on: one resource left as the apply made
// it must not keep the others from being undone. Any other failure (a backend
// error) fails the batch, to be retried, with the outcomes so far as its
// details. A cancel reaching the batch stops it after the resource in flight
// (Stopped).
func (a *Activities) CompensateResources(ctx context.Context, in CompensateBatchInput) (BatchResult, error) {
	if len(in.Actions) != len(in.IDs) {
		return BatchResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("compensate batch: %d resources, %d actions", len(in.IDs), len(in.Actions)), ErrTypeInvalid, nil)
	}
	var res BatchResult
	if activity.IsActivity(ctx) && activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &res)
	}
	if err := resumable(res.Outcomes, in.IDs); err != nil {
		return BatchResult{}, err
	}
	res.Stopped = false
	var mu sync.Mutex
	recorded := res
	stop := beatEvery(ctx, batchBeat, func() any {
		mu.Lock()
		defer mu.Unlock()
		return recorded
	})
	defer stop()
	for k := len(res.Outcomes); k < len(in.IDs); k++ {
		if ctx.Err() != nil {
			if cancelledByRun(ctx) {
				res.Stopped = true
				return res, nil
			}
			return BatchResult{}, batchFailure(release.ErrStopped, res)
		}
		node := release.Node(in.Node)
		node.ID, node.Delete = in.IDs[k], in.Actions[k] == engine.Delete // a node the spec dropped
		start := time.Now()
		// The undo in flight finishes whatever comes: a cancel stops the
		// batch between two resources.
		err := a.m.Compensate(context.WithoutCancel(ctx), node, in.Actions[k])
		o := Outcome{ID: node.ID, Took: time.Since(start)}
		if err != nil {
			if !failedForGood(err) {
				return BatchResult{}, batchFailure(err, res)
			}
			o.Error = err.Error()
		}
		res.Outcomes = append(res.Outcomes, o)
		mu.Lock()
		recorded = BatchResult{Outcomes: res.Outcomes[:len(res.Outcomes):len(res.Outcomes)]}
		mu.Unlock()
	}
	return res, nil
}

// resumable checks that the outcomes an earlier attempt heartbeated are of
// the first resources of ids.
func resumable(done []Outcome, ids []string) error {
	if len(done) > len(ids) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("batch of %d resources: %d already done", len(ids), len(done)), ErrTypeInvalid, nil)
	}
	for i, o := range done {
		if o.ID != ids[i] {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("batch: resource %d is %s, the earlier attempt did %s", i, ids[i], o.ID), ErrTypeInvalid, nil)
		}
	}
	return nil
}

// failedForGood reports whether err is a failure no retry mends.
func failedForGood(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(temporalError(err), &app) && app.NonRetryable()
}
