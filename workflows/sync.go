package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/gitsource"
	"github.com/kumoproj/kumo/runspec"
)

// syncCheckTimeout bounds one ls-remote (and the sync state read).
const syncCheckTimeout = 2 * time.Minute

// SourceSync is one tick of a sync schedule (or a git webhook's trigger of
// it): it resolves the source's ref, and when the commit is not the one last
// started (newer, or older after a force-push), starts a preview or an apply
// of it as a child run with the stack's usual ID, so a run in progress makes
// the tick busy instead of running beside it; a busy commit stays pending and
// the next tick deploys the newest. The tick waits for its run, so ticks of
// one stack never overlap (the schedule buffers the next one).
func SourceSync(ctx workflow.Context, in runspec.SyncInput) (runspec.SyncResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: syncCheckTimeout, RetryPolicy: retryPolicy, Summary: "ls-remote " + in.Source,
	})
	var check runspec.SyncCheck
	if err := workflow.ExecuteActivity(actx, acts.CheckSource, in).Get(ctx, &check); err != nil {
		return runspec.SyncResult{}, err
	}
	g := check.Git
	res := runspec.SyncResult{Commit: g.Commit, Outcome: runspec.SyncUnchanged}
	if !check.Start {
		return res, nil
	}
	tick := workflow.GetInfo(ctx).WorkflowExecution
	op, wtype := "apply", runspec.ApplyWorkflow
	id := runspec.MutatingWorkflowID(in.Project, in.Workspace)
	if in.Mode == gitsource.ModePreview {
		op, wtype = "preview", runspec.PreviewWorkflow
		id = fmt.Sprintf("%s/preview/sync-%s", id, tick.RunID)
	}
	reason := fmt.Sprintf("sync of source %s: %s@%s is at commit %s", g.Source, g.URL, g.Ref, g.Commit)
	if len(check.Skipped) > 0 {
		reason += fmt.Sprintf(" (skipped %d commit(s) seen while the stack was busy: %s)", len(check.Skipped), strings.Join(check.Skipped, ", "))
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		StaticSummary:         fmt.Sprintf("%s %s/%s from %s@%.12s", op, in.Project, in.Workspace, g.Source, g.Commit),
		StaticDetails:         fmt.Sprintf("**kumo %s** of project `%s`, workspace `%s`, stack `%s`\n\n- spec: generated from git source `%s`: %s@%s, commit `%s`, path `%s`\n- started by: sync `%s`\n", op, in.Project, in.Workspace, check.Stack, g.Source, g.URL, g.Ref, g.Commit, g.Path, tick.ID),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			ProjectAttr.ValueSet(in.Project),
			StackAttr.ValueSet(check.Stack),
			WorkspaceAttr.ValueSet(in.Workspace),
			OperationAttr.ValueSet(op),
			StatusAttr.ValueSet(string(runspec.StatusRunning)),
		),
	})
	rin := runspec.RunInput{
		Project: in.Project, Workspace: in.Workspace, Stack: check.Stack, Reason: reason,
		Source: &runspec.GenerateInput{Project: in.Project, Workspace: in.Workspace, Git: g},
		Git:    g, Label: engine.ReleaseLabel{SourceCommit: g.Commit},
		Parallelism: in.Parallelism, AutoApprove: !in.ApprovalRequired, Settings: in.Settings,
		StartedBy: "sync " + tick.ID,
	}
	f := workflow.ExecuteChildWorkflow(cctx, wtype, rin)
	var child workflow.Execution
	err := f.GetChildWorkflowExecution().Get(ctx, &child)
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	rec := runspec.SyncRecord{Project: in.Project, Workspace: in.Workspace, Source: in.Source, Commit: g.Commit, Skipped: check.Skipped}
	switch {
	case errors.As(err, &started):
		rec.Busy, rec.Skipped = true, nil
		res.Outcome, res.Error = runspec.SyncBusy, "another run holds "+id+": the next tick deploys the newest commit"
	case err != nil:
		return res, err
	default:
		rec.WorkflowID, rec.RunID = child.ID, child.RunID
		res.Outcome, res.WorkflowID, res.RunID, res.Skipped = runspec.SyncStarted, child.ID, child.RunID, check.Skipped
	}
	if err := workflow.ExecuteActivity(actx, acts.RecordSync, rec).Get(ctx, nil); err != nil {
		return res, err
	}
	if rec.Busy {
		return res, nil
	}
	var out runspec.Result
	err = f.Get(ctx, &out)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		_ = app.Details(&out)
	}
	res.Revision, res.Status = out.Revision, out.Status
	if err != nil {
		res.Error = rootMessage(err)
	}
	return res, nil
}
