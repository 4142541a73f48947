package client

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/runspec"
)

// Test runs the test hooks of the latest release of in's stack (a Test
// workflow under the stack's run ID, so never alongside an apply of it) and
// waits for them. A test that failed returns the result with an error
// saying which and why.
func (c *Client) Test(ctx context.Context, in runspec.TestInput) (runspec.TestResult, error) {
	var res runspec.TestResult
	tc, err := c.connect(ctx)
	if err != nil {
		return res, err
	}
	id := runspec.MutatingWorkflowID(in.Project, in.Workspace)
	wr, err := tc.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                runspec.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		StaticSummary:            "test " + in.Project + "/" + in.Workspace,
	}, runspec.TestWorkflow, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return res, fmt.Errorf("%w on %s/%s: run %s (workflow %s) has not finished; test once it has", ErrBusy, in.Project, in.Workspace, started.RunId, id)
	}
	if err != nil {
		return res, fmt.Errorf("start test: %w", err)
	}
	err = wr.Get(ctx, &res)
	if ctx.Err() != nil {
		_ = tc.CancelWorkflow(context.WithoutCancel(ctx), wr.GetID(), wr.GetRunID())
		return res, ctx.Err()
	}
	var app *temporal.ApplicationError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &app):
		if app.HasDetails() {
			_ = app.Details(&res)
		}
		if app.Type() == activities.ErrTypeNoRelease {
			return res, errors.New(app.Message())
		}
		return res, fmt.Errorf("test of %s/%s: %s", in.Project, in.Workspace, app.Message())
	default:
		return res, fmt.Errorf("test of %s/%s: %w", in.Project, in.Workspace, err)
	}
}
