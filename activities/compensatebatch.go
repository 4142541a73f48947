package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
	lastHeartbeat(ctx, &res)
	done := make([]string, len(res.Outcomes))
	for i, o := range res.Outcomes {
		done[i] = o.ID
	}
	if err := release.CheckResume(in.IDs, done); err != nil {
		return BatchResult{}, temporalError(err)
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

// failedForGood reports whether err is a failure no retry mends.
func failedForGood(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(temporalError(err), &app) && app.NonRetryable()
}
