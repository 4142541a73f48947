package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/runspec"
)

// A drift check reads every resource of a stack (and refreshes Terraform
// ones), so it may take long; its activity heartbeats.
const driftTimeout = time.Hour

// DriftWorkflowID names one drift check of project+workspace: checks never
// block applies, nor each other.
func DriftWorkflowID(project, workspace string, at time.Time) string {
	return fmt.Sprintf("kumo-drift/%s/%s/%d", project, workspace, at.UnixNano())
}

// DriftCheck compares the latest succeeded release of a stack with live and
// stores the report in the backend. It files the run under KumoDrifted and
// KumoDriftCount (so the Web UI query `KumoDrifted = true` lists drifted
// stacks) and puts the result, with the resources not in sync, in its current
// details.
func DriftCheck(ctx workflow.Context, in runspec.DriftInput) (runspec.DriftResult, error) {
	if in.CheckTime.IsZero() {
		in.CheckTime = workflow.Now(ctx)
	}
	ctx = withRuntimeQueue(ctx, in.Settings.TaskQueue)
	var res runspec.DriftResult
	err := workflow.ExecuteActivity(heartbeatStep(ctx, driftTimeout, "check drift "+in.Project+"/"+in.Workspace), acts.CheckDrift, in).Get(ctx, &res)
	if err != nil {
		// The client filed the run as running; a failed check must not stay so.
		if uerr := workflow.UpsertTypedSearchAttributes(ctx, StatusAttr.ValueSet(string(StatusFailed))); uerr != nil {
			return res, uerr
		}
		return res, err
	}
	notInSync := int64(res.Counts.Resources - res.Counts.InSync)
	if err := workflow.UpsertTypedSearchAttributes(ctx,
		DriftedAttr.ValueSet(notInSync > 0),
		DriftCountAttr.ValueSet(notInSync),
		RevisionAttr.ValueSet(int64(res.Revision)),
		StatusAttr.ValueSet(string(StatusSucceeded)),
	); err != nil {
		return res, err
	}
	workflow.SetCurrentDetails(ctx, driftDetails(res))
	return res, nil
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
	return b.String()
}
