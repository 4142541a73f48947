package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// maxRefreshBatch bounds the resources of one RefreshResources: its input is
// their IDs, a few tens of kilobytes at most, and it records them in one
// write.
const maxRefreshBatch = 500

// refreshStale records the refreshed state of the nodes the latest preview
// found stale (r.stale), in batches of Kubernetes resources (read together,
// one list per kind and namespace) and the others one by one, with the run's
// parallelism. From previewRefreshChange on, previews write nothing (an
// unchanged resource whose live object differs from its record is only
// listed), so a run rejected, timed out or cancelled at its approval leaves
// its release's state as it found it. It runs after the approval and before
// the walk: an apply that resolves a reference to an unchanged resource reads
// its refreshed record, as it did when previews recorded it.
func (r *run) refreshStale(ctx workflow.Context, node func(int) activities.NodeInput) error {
	if len(r.stale) == 0 {
		return nil
	}
	stale := make([]bool, len(r.plan.Nodes))
	for _, i := range r.stale {
		stale[i] = true
	}
	var failures nodeErrors
	batchWalk{
		deps: make([][]int32, len(r.plan.Nodes)), limit: r.in.Parallelism, maxBatch: maxRefreshBatch, stopped: r.isStopped,
		work: func(i int) bool { return stale[i] },
		class: func(i int) string {
			if r.plan.Nodes[i].Type == engine.Kubernetes {
				return "refresh"
			}
			return ""
		},
		start: func(nodes []int) []workflow.Future {
			in := r.batchInput(nodes, node)
			in.Node.Delete = false
			f := workflow.ExecuteActivity(batchStep(ctx, false, batchSummary("refresh", in.IDs)), acts.RefreshResources, in)
			futures := make([]workflow.Future, len(nodes))
			for k := range futures {
				futures[k] = f // the batch's nodes are refreshed together
			}
			return futures
		},
		done: func(i int, f workflow.Future) error {
			if f != nil {
				failures.add(r.plan.Nodes[i].ID, f.Get(ctx, nil))
			}
			return nil
		},
	}.run(ctx)
	return failures.err("refresh")
}

// refreshLive records every resource of a Refresh run as it is live
// (RefreshResources records those whose live object differs from their
// record, one gone as deleted), and applies nothing. The preview's changes
// tell what differed; the drifted nodes are shown done.
func (r *run) refreshLive(ctx workflow.Context, changes []engine.Change, node func(int) activities.NodeInput) error {
	r.setStage(runspec.StageApplying, len(r.plan.Nodes))
	r.stale = r.stale[:0]
	for i := range r.plan.Nodes {
		r.stale = append(r.stale, i)
	}
	err := r.refreshStale(ctx, node)
	for i, c := range changes {
		n := r.node(i)
		switch {
		case err != nil:
		case c.Drifted:
			n.Status = runspec.NodeSucceeded
		default:
			n.Status = runspec.NodeUnchanged
		}
	}
	return err
}
