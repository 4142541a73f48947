package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// HookInput asks for the hooks of one point of a run (release.HookInput);
// the run that labels their objects is the activity's own workflow run.
type HookInput struct {
	Key           backend.ReleaseKey      `json:"key"`
	SpecHash      string                  `json:"specHash,omitempty"`
	PriorRevision int                     `json:"priorRevision,omitempty"`
	Operation     engine.Operation        `json:"operation"`
	Point         engine.HookPoint        `json:"point"`
	Settings      runspec.RuntimeSettings `json:"settings"`
	Timeout       time.Duration           `json:"timeout,omitempty"`
}

// HookResult is what ran, and why a hook failed (release.HookResult).
type HookResult = release.HookResult

// RunHooks runs the hooks of one point of a run: created, waited for until
// done, deleted as their policies say (release.Manager.RunHooks),
// heartbeating meanwhile. A hook that fails is the result's Error, not the
// step's: the workflow decides what follows.
func (a *Activities) RunHooks(ctx context.Context, in HookInput) (HookResult, error) {
	if err := handOver(ctx); err != nil {
		return HookResult{}, err
	}
	defer heartbeat(ctx)()
	run := ""
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		run = info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID
	}
	res, err := a.m.RunHooks(ctx, release.HookInput{Key: in.Key, SpecHash: in.SpecHash, PriorRevision: in.PriorRevision,
		Operation: in.Operation, Point: in.Point, Run: run, Settings: in.Settings, Timeout: in.Timeout})
	return res, temporalError(err)
}

// RunTests runs the test hooks of a stack's latest release, as helm test
// does (release.Manager.RunTests), heartbeating meanwhile. A test that
// fails is the result's Error, not the step's.
func (a *Activities) RunTests(ctx context.Context, in runspec.TestInput) (runspec.TestResult, error) {
	defer heartbeat(ctx)()
	run := ""
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		run = info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID
	}
	res, err := a.m.RunTests(ctx, in, run)
	return res, temporalError(err)
}
