package client

import (
	"context"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/kumoproj/kumo/runspec"
)

// ErrRunEnded is wrapped by the error of cancelling a run that has ended.
var ErrRunEnded = errors.New("the run has ended")

// CancelRun cancels a running run of project (see Run.Cancel) and returns a
// handle to follow it to its end.
func (c *Client) CancelRun(ctx context.Context, project, runID, reason string) (*Run, error) {
	run, info, err := c.OpenRun(ctx, project, runID)
	if errors.Is(err, ErrNoRun) {
		// Not a run (yet): an entry waiting in a run queue is removed.
		queued, qerr := c.FindQueued(ctx, project, runID)
		if qerr != nil {
			return nil, qerr
		}
		if queued != nil {
			return c.dequeue(ctx, queued, reason)
		}
	}
	if err != nil {
		return nil, err
	}
	if !info.Running() {
		return nil, fmt.Errorf("cannot cancel run %s: %w (%s)", runID, ErrRunEnded, info.Status)
	}
	if err := run.Cancel(ctx, reason); err != nil {
		return nil, err
	}
	return run, nil
}

// Cancel stops the run: no resource starts any more, the ones in flight finish
// and are recorded, an apply started with RollbackOnFailure undoes what it
// changed, and the release ends failed with the reason.
//
// The reason travels as a CancelSignal, which the workflow reads; Temporal's
// cancel request that follows carries it too, for the run's history in the Web
// UI (the SDK does not hand that one to the workflow).
func (r *Run) Cancel(ctx context.Context, reason string) error {
	err := r.c.temporal.SignalWorkflow(ctx, r.WorkflowID, r.RunID, runspec.CancelSignal, runspec.Cancel{Reason: reason, By: startedBy()})
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("cannot cancel run %s: %w", r.RunID, ErrRunEnded)
	}
	if err != nil {
		return fmt.Errorf("cancel run %s: %w", r.RunID, err)
	}
	_, err = r.c.temporal.WorkflowService().RequestCancelWorkflowExecution(ctx, &workflowservice.RequestCancelWorkflowExecutionRequest{
		Namespace:         r.c.opts.Namespace,
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: r.WorkflowID, RunId: r.RunID},
		Identity:          "kumo run cancel",
		Reason:            reason,
	})
	if errors.As(err, &nf) {
		return nil // it ended since the signal; the signal did its part
	}
	if err != nil {
		return fmt.Errorf("cancel run %s: %w", r.RunID, err)
	}
	return nil
}
