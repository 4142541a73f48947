package client

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/runspec"
)

// SquatterError says that a stack's lock, the workflow ID
// kumo/<project>/<workspace> every apply, destroy and rollback runs under, is
// held by a running workflow that is none of them. Temporal lets only one
// workflow run under an ID, so until it ends every change to the stack is
// refused; `kumo resume` has nothing of kumo's to follow, and `kumo release
// unlock --squatter` (for an admin: it terminates the workflow) is how it is cleared.
type SquatterError struct {
	Project, Workspace string
	WorkflowID, RunID  string
	// Type is the squatting workflow's type; StartedBy the identity its start
	// recorded (the authenticated subject where kumo's frontend stamped it).
	Type, StartedBy string
}

func (e *SquatterError) Error() string {
	by := ""
	if e.StartedBy != "" {
		by = ", started by " + e.StartedBy
	}
	return fmt.Sprintf("%s/%s is held by workflow %s (run %s, type %q%s), which is not a kumo run: it blocks every apply, destroy and rollback of the stack; an admin clears it with `kumo release unlock --squatter`",
		e.Project, e.Workspace, e.WorkflowID, e.RunID, e.Type, by)
}

// Unwrap makes a squatter a busy stack for errors.Is(err, ErrBusy).
func (e *SquatterError) Unwrap() error { return ErrBusy }

// mutatingTypes are the workflow types that may hold a stack's lock.
var mutatingTypes = map[string]bool{
	runspec.ApplyWorkflow: true, runspec.DestroyWorkflow: true, runspec.RollbackWorkflow: true, runspec.RefreshWorkflow: true,
	runspec.ForgetWorkflow: true, runspec.MoveWorkflow: true,
}

// lockHolder is the running workflow that holds project+workspace's lock,
// or nil when none does.
func lockHolder(ctx context.Context, tc sdkclient.Client, project, workspace string) (*workflowpb.WorkflowExecutionInfo, error) {
	d, err := tc.DescribeWorkflowExecution(ctx, runspec.MutatingWorkflowID(project, workspace), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look at the workflow holding %s/%s: %w", project, workspace, err)
	}
	if info := d.GetWorkflowExecutionInfo(); info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return info, nil
	}
	return nil, nil
}

// squatter returns the workflow squatting on project+workspace's lock, or nil
// when the lock is free or held by a kumo run.
func squatter(ctx context.Context, tc sdkclient.Client, project, workspace string) (*SquatterError, error) {
	holder, err := lockHolder(ctx, tc, project, workspace)
	if err != nil || holder == nil {
		return nil, err
	}
	return squatterOf(ctx, tc, project, workspace, holder), nil
}

// squatterOf is holder as a SquatterError, or nil when it is a kumo run.
func squatterOf(ctx context.Context, tc sdkclient.Client, project, workspace string, holder *workflowpb.WorkflowExecutionInfo) *SquatterError {
	if mutatingTypes[holder.GetType().GetName()] {
		return nil
	}
	s := &SquatterError{
		Project: project, Workspace: workspace, WorkflowID: holder.GetExecution().GetWorkflowId(),
		RunID: holder.GetExecution().GetRunId(), Type: holder.GetType().GetName(),
	}
	// Who started it is in the first event; a history that cannot be read
	// leaves it unnamed rather than hiding the squatter.
	it := tc.GetWorkflowHistory(ctx, s.WorkflowID, s.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if it.HasNext() {
		if ev, err := it.Next(); err == nil {
			s.StartedBy = ev.GetWorkflowExecutionStartedEventAttributes().GetIdentity()
		}
	}
	return s
}

// ClearSquatter terminates the workflow squatting on project+workspace's lock
// (see SquatterError) and returns it, or returns nil when there is none. The
// frontend lets only an admin of the stack terminate a workflow.
func (c *Client) ClearSquatter(ctx context.Context, project, workspace string) (*SquatterError, error) {
	tc, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	s, err := squatter(ctx, tc, project, workspace)
	if err != nil || s == nil {
		return nil, err
	}
	reason := fmt.Sprintf("cleared by `kumo release unlock --squatter`: a workflow of type %q is not a kumo run and held the lock of %s/%s", s.Type, project, workspace)
	if err := tc.TerminateWorkflow(ctx, s.WorkflowID, s.RunID, reason); err != nil {
		return nil, fmt.Errorf("clear %s: %w", s.WorkflowID, err)
	}
	return s, nil
}
