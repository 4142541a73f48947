package client

import (
	"context"
	"errors"
	"fmt"

	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/runspec"
)

// ErrNotAnswerable is wrapped by the error of an approval or rejection the run
// did not take: it is not awaiting approval, was answered already, or the
// digest given is not its plan's.
var ErrNotAnswerable = errors.New("not accepted")

// RunToAnswer finds the run an approval or rejection is for: the run of
// project with ID runID, or, when runID is empty, the running apply, destroy
// or rollback of project+workspace. A run that has ended is an error.
func (c *Client) RunToAnswer(ctx context.Context, project, workspace, runID string) (*Run, error) {
	if runID == "" {
		run, err := c.Unfinished(ctx, project, workspace)
		if err == nil && run == nil {
			err = fmt.Errorf("nothing to answer: %s/%s has no apply, destroy or rollback running", project, workspace)
		}
		return run, err
	}
	run, info, err := c.OpenRun(ctx, project, runID)
	if err != nil {
		return nil, err
	}
	if !info.Running() {
		return nil, fmt.Errorf("%w: %s run %s has ended (%s); it awaits nothing", ErrNotAnswerable, run.Operation, run.RunID, info.Status)
	}
	switch run.Operation {
	case "apply", "destroy", "rollback":
		return run, nil
	}
	return nil, fmt.Errorf("%w: run %s is a %s, not an apply, destroy or rollback", ErrNotAnswerable, run.RunID, run.Operation)
}

// Answer approves or rejects the plan of a run awaiting approval, and returns
// once the run has taken the answer: an error wrapping ErrNotAnswerable says
// why it did not (not awaiting approval, answered already, another plan's
// digest), and the run goes on waiting. req.By defaults to user@host.
func (r *Run) Answer(ctx context.Context, req runspec.ApprovalRequest) (runspec.ApprovalAnswer, error) {
	if req.By == "" {
		req.By = startedBy()
	}
	var answer runspec.ApprovalAnswer
	h, err := r.c.temporal.UpdateWorkflow(ctx, sdkclient.UpdateWorkflowOptions{
		WorkflowID: r.WorkflowID, RunID: r.RunID, UpdateName: runspec.ApproveUpdate, Args: []any{req},
		WaitForStage: sdkclient.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, &answer)
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return answer, fmt.Errorf("%w: %s", ErrNotAnswerable, app.Message())
	}
	return answer, err
}
