package client

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/workflows"
)

// ErrNotAnswerable is wrapped by the error of an approval or rejection the run
// did not take: it is not awaiting approval, was answered already, or the
// digest given is not its plan's.
var ErrNotAnswerable = errors.New("not accepted")

// runIDShape is what Temporal run IDs look like; anything else is not looked up.
var runIDShape = regexp.MustCompile(`^[0-9a-fA-F-]{8,64}$`)

// RunToAnswer finds the run an approval or rejection is for: the run with ID
// runID, or, when runID is empty, the running apply, destroy or rollback of
// project+workspace. A run that has ended is an error.
func (c *Client) RunToAnswer(ctx context.Context, project, workspace, runID string) (*Run, error) {
	tc, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	workflowID := workflows.MutatingWorkflowID(project, workspace)
	if runID != "" {
		if workflowID, err = c.workflowOfRun(ctx, runID); err != nil {
			return nil, err
		}
	}
	d, err := tc.DescribeWorkflowExecution(ctx, workflowID, runID)
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf) && runID == "":
		return nil, fmt.Errorf("nothing to answer: %s/%s has no apply, destroy or rollback running", project, workspace)
	case err != nil:
		return nil, err
	}
	info := d.GetWorkflowExecutionInfo()
	run := &Run{c: c, Operation: operations[info.GetType().GetName()], WorkflowID: workflowID, RunID: info.GetExecution().GetRunId()}
	if status := info.GetStatus(); status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		if runID == "" {
			return nil, fmt.Errorf("nothing to answer: %s/%s has no apply, destroy or rollback running", project, workspace)
		}
		return nil, fmt.Errorf("%w: %s run %s has ended (%s); it awaits nothing", ErrNotAnswerable, run.Operation, run.RunID,
			strings.ToLower(strings.TrimPrefix(status.String(), "WORKFLOW_EXECUTION_STATUS_")))
	}
	if run.Operation == "" || run.Operation == "preview" || run.Operation == "generate" {
		return nil, fmt.Errorf("%w: run %s (workflow %s) is not an apply, destroy or rollback", ErrNotAnswerable, run.RunID, workflowID)
	}
	return run, nil
}

// workflowOfRun looks a run ID up in Temporal's visibility store.
func (c *Client) workflowOfRun(ctx context.Context, runID string) (string, error) {
	if !runIDShape.MatchString(runID) {
		return "", fmt.Errorf("%q is not a run ID: kumo prints the run ID of the runs it starts, and `kumo release list` shows it", runID)
	}
	resp, err := c.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: c.opts.Namespace, Query: fmt.Sprintf("RunId = '%s'", runID), PageSize: 1,
	})
	if err != nil {
		return "", fmt.Errorf("look up run %s: %w", runID, err)
	}
	if len(resp.GetExecutions()) == 0 {
		return "", fmt.Errorf("no run %s in Temporal namespace %s", runID, c.opts.Namespace)
	}
	return resp.GetExecutions()[0].GetExecution().GetWorkflowId(), nil
}

// Answer approves or rejects the plan of a run awaiting approval, and returns
// once the run has taken the answer: an error wrapping ErrNotAnswerable says
// why it did not (not awaiting approval, answered already, another plan's
// digest), and the run goes on waiting.
func (r *Run) Answer(ctx context.Context, req workflows.ApprovalRequest) (workflows.ApprovalAnswer, error) {
	var answer workflows.ApprovalAnswer
	h, err := r.c.temporal.UpdateWorkflow(ctx, sdkclient.UpdateWorkflowOptions{
		WorkflowID: r.WorkflowID, RunID: r.RunID, UpdateName: workflows.ApproveUpdate, Args: []any{req},
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

// Approve answers the run's preview from its own prompt: go ahead, or not.
func (r *Run) Approve(ctx context.Context, approved bool) error {
	req := workflows.ApprovalRequest{Approve: approved}
	if !approved {
		req.Reason = "not approved"
	}
	_, err := r.Answer(ctx, req)
	return err
}
