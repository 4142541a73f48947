package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
)

// A drift check reads every resource of a stack (and refreshes Terraform
// ones), so it may take long; its activity heartbeats.
const driftTimeout = time.Hour

// DriftCheck compares the latest succeeded release of a stack with live and
// stores the report in the backend. It files the run under KumoDrifted and
// KumoDriftCount (so the Web UI query `KumoDrifted = true` lists drifted
// stacks) and puts the result, with the resources not in sync, in its current
// details. It POSTs the changes of drift state to the workspace's webhook and
// its event sinks (Slack, generic webhooks) and,
// in remediate mode, re-applies the checked release when the check decided so
// (see remediate).
func DriftCheck(ctx workflow.Context, in runspec.DriftInput) (runspec.DriftResult, error) {
	if err := checkStack(ctx, in.Project, in.Workspace); err != nil {
		return runspec.DriftResult{}, err
	}
	if in.CheckTime.IsZero() {
		in.CheckTime = workflow.Now(ctx)
	}
	ctx = withRuntimeQueue(ctx, in.Settings.TaskQueue)
	var res runspec.DriftResult
	if err := checkDrift(ctx, in).Get(ctx, &res); err != nil {
		// The client filed the run as running; a failed check must not stay so.
		if uerr := workflow.UpsertTypedSearchAttributes(ctx, StatusAttr.ValueSet(string(runspec.StatusFailed))); uerr != nil {
			return res, uerr
		}
		return res, err
	}
	version := changeVersion(ctx, driftRemediateChange, driftRemediateVersion)
	status := runspec.StatusSucceeded
	if res.Remediation != nil && res.Remediation.State == drift.Stuck {
		status = runspec.StatusDriftStuck
	}
	notInSync := int64(res.Counts.Resources - res.Counts.InSync)
	if err := workflow.UpsertTypedSearchAttributes(ctx,
		DriftedAttr.ValueSet(notInSync > 0),
		DriftCountAttr.ValueSet(notInSync),
		RevisionAttr.ValueSet(int64(res.Revision)),
		StatusAttr.ValueSet(string(status)),
	); err != nil {
		return res, err
	}
	workflow.SetCurrentDetails(ctx, driftDetails(res))
	if version == workflow.DefaultVersion {
		return res, nil
	}
	notifyWebhook(ctx, in.Drift.Webhook, res.Events)
	sinks := driftSinks(ctx, in)
	sinks.announceDrift(ctx, res.Events...)
	if res.Remediation == nil || res.Remediation.State != drift.Remediating {
		sinks.settle(ctx)
		return res, nil
	}
	rec := remediate(ctx, in, res)
	var event *drift.Event
	if err := workflow.ExecuteActivity(step(ctx, "record remediation"), acts.RecordRemediation, rec).Get(ctx, &event); err != nil {
		return res, err
	}
	res.Remediation.Finish(rec.WorkflowID, rec.Revision, rec.Outcome, rec.Error)
	workflow.SetCurrentDetails(ctx, driftDetails(res))
	if event != nil {
		notifyWebhook(ctx, in.Drift.Webhook, []drift.Event{*event})
		sinks.announceDrift(ctx, *event)
	}
	sinks.settle(ctx)
	return res, nil
}

// checkDrift runs the check itself. A platform's schedules start thousands
// of checks an hour, most of them over a few objects and quick, so the Temporal
// round trips around the check cost more than the check: since
// localDriftChange it is a local activity of the workflow's worker, which
// runs it in the check's first workflow task. That worker may do so: with no
// runtime queue the check's runtime steps run on the workflow's own task
// queue, whose workers run both. A check with a runtime queue stays an
// ordinary activity on that queue, where the cluster's credentials are. A
// long check (a Terraform refresh) keeps its workflow task alive by the SDK's
// task heartbeat; a worker that dies during it is replaced when the task
// times out, and the check runs again (it is keyed by the run).
func checkDrift(ctx workflow.Context, in runspec.DriftInput) workflow.Future {
	summary := "check drift " + in.Project + "/" + in.Workspace
	if runtimeQueue(ctx) == "" && changeVersion(ctx, localDriftChange, localDriftVersion) >= localDriftVersion {
		return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: driftTimeout,
			RetryPolicy:         retryPolicy,
			Summary:             summary,
		}), acts.CheckDrift, in)
	}
	return workflow.ExecuteActivity(heartbeatStep(ctx, driftTimeout, summary), acts.CheckDrift, in)
}

// driftDetails renders the result as markdown for the Web UI.
func driftDetails(res runspec.DriftResult) string {
	var b strings.Builder
	b.WriteString(res.Summary)
	b.WriteString("\n")
	for _, line := range res.NotInSync {
		b.WriteString("\n- " + line)
	}
	if n := res.Counts.Resources - res.Counts.InSync - len(res.NotInSync); n > 0 {
		fmt.Fprintf(&b, "\n- ... and %d more (kumo drift report)", n)
	}
	if st := res.Remediation; st != nil && st.Outcome != "" {
		fmt.Fprintf(&b, "\n\nremediation `%s`: %s", st.WorkflowID, st.Outcome)
		if st.Revision > 0 {
			fmt.Fprintf(&b, ", revision %d", st.Revision)
		}
		if st.Error != "" {
			b.WriteString(": " + st.Error)
		}
	}
	return b.String()
}
