package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// CollectGarbage removes kumo's expired and unreferenced records from the
// worker's backend (release.Manager.CollectGarbage), heartbeating while it
// reads every release.
func (a *Activities) CollectGarbage(ctx context.Context, in runspec.GCInput) (runspec.GCResult, error) {
	if err := release.GCPolicy(in).Validate(); err != nil {
		// Retrying does not mend a policy.
		return runspec.GCResult{}, temporal.NewNonRetryableApplicationError("gc policy: "+err.Error(), "InvalidGCPolicy", nil)
	}
	defer heartbeat(ctx)()
	rep, err := a.m.CollectGarbage(ctx, in, time.Now())
	if err != nil {
		return runspec.GCResult{}, temporalError(err)
	}
	return release.GCResultOf(rep), nil
}
