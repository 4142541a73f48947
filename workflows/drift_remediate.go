package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
)

// Remediate is an apply of the spec of the release a drift check found
// drifted, recorded as a new revision with operation remediate and the
// check's name as its reason: previewed against live, applied in dependency
// order, under the stack's lock like any apply.
func Remediate(ctx workflow.Context, in runspec.RunInput) (runspec.Result, error) {
	return mutate(ctx, in, engine.OperationRemediate)
}

// remediate runs the remediation a check decided on as a child workflow with
// the stack's apply ID (kumo/<project>/<workspace>), so an apply or destroy
// in progress makes it busy instead of running beside it. The child outlives a
// cancelled or terminated check: an apply is never cut off half-way. It waits
// for an approval when the policy requires one.
func remediate(ctx workflow.Context, in runspec.DriftInput, res runspec.DriftResult) runspec.RemediationRecord {
	check := workflow.GetInfo(ctx).WorkflowExecution
	id := runspec.MutatingWorkflowID(in.Project, in.Workspace)
	reason := fmt.Sprintf("remediate drift found by check %s (run %s) in revision %d", check.ID, check.RunID, res.Revision)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		StaticSummary:         fmt.Sprintf("remediate %s/%s: re-apply revision %d", in.Project, in.Workspace, res.Revision),
		StaticDetails:         reason,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			ProjectAttr.ValueSet(in.Project),
			StackAttr.ValueSet(res.Stack),
			WorkspaceAttr.ValueSet(in.Workspace),
			OperationAttr.ValueSet(string(engine.OperationRemediate)),
			StatusAttr.ValueSet(string(runspec.StatusRunning)),
		),
	})
	rin := runspec.RunInput{
		Project: in.Project, Workspace: in.Workspace, Stack: res.Stack, SpecHash: res.SpecHash, Reason: reason,
		Parallelism: in.Parallelism, AutoApprove: !in.Drift.Remediation.ApprovalRequired(), Settings: in.Settings,
		StartedBy: "drift check " + check.ID,
	}
	rec := runspec.RemediationRecord{Project: in.Project, Workspace: in.Workspace, Check: res.RunID, Keep: in.Drift.KeepOrDefault(), WorkflowID: id}
	f := workflow.ExecuteChildWorkflow(cctx, runspec.RemediateWorkflow, rin)
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	if err := f.GetChildWorkflowExecution().Get(ctx, nil); errors.As(err, &started) {
		rec.Outcome, rec.Error = drift.OutcomeBusy, "another run holds "+id
		return rec
	} else if err != nil {
		rec.Outcome, rec.Error = drift.OutcomeFailed, rootMessage(err)
		return rec
	}
	var out runspec.Result
	err := f.Get(ctx, &out)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		_ = app.Details(&out)
	}
	rec.Revision, rec.Outcome = out.Revision, drift.OutcomeSucceeded
	if err != nil {
		rec.Outcome, rec.Error = drift.OutcomeFailed, rootMessage(err)
	}
	return rec
}

// notifyAttempts bounds the retries of one webhook POST: a receiver that is
// down for minutes misses the event rather than holding the check.
const notifyAttempts = 5

// notifyWebhook POSTs the events to the webhook one after the other, in order (none
// when the hook has no URL, in clear or sealed: histories recorded before
// sealed URLs have none sealed, so they replay to the same commands). Temporal retries a failed POST; one that still
// fails is logged (the activity's error names the host only), and the check
// goes on.
func notifyWebhook(ctx workflow.Context, hook drift.Webhook, events []drift.Event) {
	if hook.URL == "" && hook.Sealed == "" {
		return
	}
	for _, e := range events {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: 15 * time.Second,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: notifyAttempts},
			Summary:             "notify " + e.Event,
		})
		if err := workflow.ExecuteActivity(actx, acts.NotifyDrift, runspec.DriftNotice{Webhook: hook, Event: e}).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("drift webhook failed", "event", e.Event, "error", err)
		}
	}
}
