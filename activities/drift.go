package activities

import (
	"errors"
	"go.temporal.io/sdk/temporal"

	"context"
	"time"

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
	r, events, err := a.m.CheckDrift(ctx, release.DriftInput{
		Project: in.Project, Workspace: in.Workspace, RunID: id, CheckTime: in.CheckTime,
		Settings: in.Settings, Parallelism: in.Parallelism, Config: in.Drift, Mode: in.Mode,
	})
	if err != nil {
		return runspec.DriftResult{}, temporalError(err)
	}
	res := DriftResultOf(r)
	res.Events = events
	return res, nil
}

// RecordRemediation records how a check's remediation ended in its report and
// returns the event to announce (nil: none).
func (a *Activities) RecordRemediation(ctx context.Context, in runspec.RemediationRecord) (*drift.Event, error) {
	e, err := a.m.RecordRemediation(ctx, in)
	return e, temporalError(err)
}

// NotifyDrift signs and POSTs one drift event to the workspace's webhook. A
// failure is retried by Temporal (a refused destination or secret is not);
// the check does not fail with it.
func (a *Activities) NotifyDrift(ctx context.Context, in runspec.DriftNotice) error {
	hook := in.Webhook
	if hook.URL == "" && hook.Sealed == "" {
		hook.URL = in.URL // a notice scheduled by an older worker
	}
	hook, err := a.m.ResolveDriftWebhook(ctx, hook, in.Event)
	if errors.Is(err, release.ErrInvalid) {
		return temporal.NewNonRetryableApplicationError("drift webhook: "+err.Error(), "WebhookRefused", nil)
	}
	if err != nil {
		return temporalError(err)
	}
	w, err := release.DriftWebhookOf(hook, in.Event)
	if err != nil {
		return err
	}
	return postDriftWebhook(ctx, w, time.Now())
}

// DriftResultOf summarises a report for workflow history.
func DriftResultOf(r *drift.Report) runspec.DriftResult {
	out := runspec.DriftResult{RunID: r.RunID, Revision: r.Revision, Counts: r.Counts, Summary: r.Summary(), ExitCode: r.ExitCode(),
		Stack: r.Stack, SpecHash: r.SpecHash, Remediation: r.Remediation}
	for _, res := range r.Resources {
		if res.Status != drift.InSync && len(out.NotInSync) < runspec.MaxDriftedIDs {
			out.NotInSync = append(out.NotInSync, string(res.Status)+" "+res.ID)
		}
	}
	return out
}
