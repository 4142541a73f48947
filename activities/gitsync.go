package activities

import (
	"context"

	"github.com/kumoproj/kumo/runspec"
)

// CheckSource resolves a sync's source ref and says whether a run is due
// (release.Manager.CheckSource).
func (a *Activities) CheckSource(ctx context.Context, in runspec.SyncInput) (runspec.SyncCheck, error) {
	res, err := a.m.CheckSource(ctx, in)
	return res, temporalError(err)
}

// RecordSync stores what a sync tick did (release.Manager.RecordSync).
func (a *Activities) RecordSync(ctx context.Context, r runspec.SyncRecord) error {
	return temporalError(a.m.RecordSync(ctx, r))
}
