package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// Preview diffs the spec against what is live and the latest finished release,
// changing nothing and recording no release, so it never blocks an apply.
func Preview(ctx workflow.Context, in runspec.RunInput) (runspec.Result, error) {
	r, err := newRun(ctx, in, "preview")
	if err != nil {
		return runspec.Result{}, err
	}
	changes, err := r.previewOnly(r.work)
	res := runspec.Result{Digest: r.progress.Digest, Policies: r.progress.Policies}
	withChanges(&res, changes)
	if r.tracked {
		res.Status = r.finalStatus(err)
	}
	return r.end(ctx, res, r.finalStatus(err), err)
}

func (r *run) previewOnly(ctx workflow.Context) ([]engine.Change, error) {
	if err := r.generateSpec(ctx); err != nil {
		return nil, err
	}
	in := r.in
	var prior int
	err := workflow.ExecuteActivity(step(ctx, "latest release"), acts.LatestFinalRevision, activities.LatestFinalInput{
		Project: in.Project, Workspace: in.Workspace,
	}).Get(ctx, &prior)
	if err != nil {
		return nil, err
	}
	if err := r.planGraph(ctx, in.SpecHash, prior); err != nil {
		return nil, err
	}
	// Revision 0 in the key: a preview has no release to record state in.
	key := backend.ReleaseKey{Project: in.Project, Workspace: in.Workspace}
	changes, err := r.preview(ctx, func(i int) activities.NodeInput {
		n := r.plan.Nodes[i]
		return activities.NodeInput{Key: key, SpecHash: in.SpecHash, PriorRevision: prior, ID: n.ID, Delete: n.Delete, Settings: in.Settings}
	})
	if err != nil {
		return nil, err
	}
	r.progress.Changes, r.progress.Digest = changes, engine.TargetedDigest(engine.PlanDigest(changes), r.in.Targeting())
	return changes, r.checkPolicies(ctx, key, in.SpecHash, prior, changes)
}
