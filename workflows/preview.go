package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// Preview diffs the spec against what is live and the latest finished release,
// changing nothing and recording no release, so it never blocks an apply.
func Preview(ctx workflow.Context, in RunInput) (Result, error) {
	r, err := newRun(ctx, in)
	if err != nil {
		return Result{}, err
	}
	if err := r.generateSpec(ctx); err != nil {
		return Result{}, err
	}
	in = r.in
	var prior int
	err = workflow.ExecuteActivity(step(ctx, "latest release"), acts.LatestFinalRevision, activities.LatestFinalInput{
		Project: in.Project, Workspace: in.Workspace,
	}).Get(ctx, &prior)
	if err != nil {
		return Result{}, err
	}
	if err := r.planGraph(ctx, in.SpecHash, prior); err != nil {
		return Result{}, err
	}
	// Revision 0 in the key: a preview has no release to record state in.
	key := backend.ReleaseKey{Project: in.Project, Workspace: in.Workspace}
	changes, err := r.preview(ctx, func(i int) activities.NodeInput {
		n := r.plan.Nodes[i]
		return activities.NodeInput{Key: key, SpecHash: in.SpecHash, PriorRevision: prior, ID: n.ID, Delete: n.Delete, Settings: in.Settings}
	})
	r.progress.Stage = StageDone
	if err != nil {
		return Result{}, err
	}
	r.progress.Changes, r.progress.Digest = changes, engine.PlanDigest(changes)
	return Result{Changes: changes, Digest: r.progress.Digest}, nil
}
