package activities

import (
	"context"

	"github.com/kumoproj/kumo/engine"
)

// PriorRelease is a workspace's latest succeeded release before a rollout
// applies it: what its undo restores (Revision 0: none).
type PriorRelease struct {
	Revision int                 `json:"revision,omitempty"`
	SpecHash string              `json:"specHash,omitempty"`
	Stack    string              `json:"stack,omitempty"`
	Chart    *engine.ChartSource `json:"chart,omitempty"`
}

// LatestSucceeded returns the newest succeeded, non-destroy release of the
// workspace (release.Manager.LatestSucceeded).
func (a *Activities) LatestSucceeded(ctx context.Context, in LatestFinalInput) (PriorRelease, error) {
	r, err := a.m.LatestSucceeded(ctx, in.Project, in.Workspace)
	if err != nil || r == nil {
		return PriorRelease{}, temporalError(err)
	}
	return PriorRelease{Revision: r.Revision, SpecHash: r.SpecHash, Stack: r.Stack, Chart: r.Chart}, nil
}
