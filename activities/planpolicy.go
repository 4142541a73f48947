package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/planpolicy"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// SetPolicies sets the operator's server-wide plan policies
// (release.Manager.SetPolicies); a function, as SetGeneration is.
func SetPolicies(a *Activities, s *planpolicy.Set) { a.m.SetPolicies(s) }

// PolicyInput is a plan's changes to check (the unchanged resources are not
// among them), recorded in the run's history: IDs, actions and changed
// paths, not objects.
type PolicyInput struct {
	Key           backend.ReleaseKey      `json:"key"`
	SpecHash      string                  `json:"specHash"`
	PriorRevision int                     `json:"priorRevision"`
	Settings      runspec.RuntimeSettings `json:"settings"`
	Changes       []PolicyChange          `json:"changes"`
}

// PolicyChange is one change of PolicyInput.
type PolicyChange struct {
	ID     string        `json:"id"`
	Type   engine.Type   `json:"type,omitempty"`
	Action engine.Action `json:"action"`
	Delete bool          `json:"delete,omitempty"`
	Paths  []string      `json:"paths,omitempty"`
}

// CheckPolicies evaluates the operator's and the workspace's plan policies
// over a previewed plan (release.Manager.CheckPolicies), with the preview's
// snapshot of what is live.
func (a *Activities) CheckPolicies(ctx context.Context, in PolicyInput) (planpolicy.Results, error) {
	defer heartbeat(ctx)()
	snapshot := ""
	if activity.IsActivity(ctx) {
		snapshot = runID(ctx)
	}
	changes := make([]release.PolicyChange, len(in.Changes))
	for i, c := range in.Changes {
		changes[i] = release.PolicyChange{
			Node: release.Node{Key: in.Key, SpecHash: in.SpecHash, PriorRevision: in.PriorRevision, ID: c.ID, Delete: c.Delete, Settings: in.Settings},
			Type: c.Type, Action: c.Action, Paths: c.Paths,
		}
	}
	res, err := a.m.CheckPolicies(ctx, in.Key.Workspace, changes, snapshot)
	return res, temporalError(err)
}
