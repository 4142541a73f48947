package activities

import (
	"context"

	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// CheckDrift compares the stack's latest succeeded release with live and stores
// the report (release.Manager.CheckDrift), heartbeating while it reads; it
// returns the counts and the IDs of what is not in sync.
func (a *Activities) CheckDrift(ctx context.Context, in runspec.DriftInput) (runspec.DriftResult, error) {
	defer heartbeat(ctx)()
	id := runID(ctx)
	r, err := a.m.CheckDrift(ctx, release.DriftInput{
		Project: in.Project, Workspace: in.Workspace, RunID: id, CheckTime: in.CheckTime,
		Settings: in.Settings, Parallelism: in.Parallelism, Config: in.Drift,
	})
	if err != nil {
		return runspec.DriftResult{}, temporalError(err)
	}
	return DriftResultOf(r), nil
}

// DriftResultOf summarises a report for workflow history.
func DriftResultOf(r *drift.Report) runspec.DriftResult {
	out := runspec.DriftResult{RunID: r.RunID, Revision: r.Revision, Counts: r.Counts, Summary: r.Summary(), ExitCode: r.ExitCode()}
	for _, res := range r.Resources {
		if res.Status != drift.InSync && len(out.NotInSync) < runspec.MaxDriftedIDs {
			out.NotInSync = append(out.NotInSync, string(res.Status)+" "+res.ID)
		}
	}
	return out
}
