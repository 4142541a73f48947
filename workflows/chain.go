package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/resid"
)

// chainFollows is the walk's follows (nil for runs recorded before
// chainChange): whether node i's step may go on to apply or delete its one
// dependent, which it may only once the history is long (longHistory). A
// delete may: a chain's deletes go one after another, each once the one
// before is gone (BatchInput.Chain). An apply may when nothing can hold its
// dependent back after it: when the run waits for no health, or when its
// kind has no status to wait for (a ConfigMap, a Secret, RBAC); an apply
// that may wait (a Deployment) ends its step, and its dependent waits for
// its health as before.
//
// The history's length is GetCurrentHistoryLength plus the steps started:
// local steps done within the current workflow task are not in the first
// yet (a chain's steps may run for localStepBudget in one task), and
// counting every step again only brings chains' batches on earlier.
func (r *run) chainFollows(ctx workflow.Context, changes []engine.Change, wait bool, steps *nodeSteps) func(i int) bool {
	if workflow.GetVersion(ctx, chainChange, workflow.DefaultVersion, chainVersion) == workflow.DefaultVersion {
		return nil
	}
	return func(i int) bool {
		if !longHistory(ctx, steps.started) {
			return false
		}
		c := changes[i]
		return c.Action == engine.Delete || !wait || statusless(c.ID)
	}
}

// isChain reports whether the nodes of a step are a chain (each depending on
// the one before) rather than ready nodes of one class, none depending on
// another: what a chain step's second node tells.
func (r *run) isChain(nodes []int) bool {
	return len(nodes) > 1 && slices.Contains(r.plan.Nodes[nodes[1]].Deps, int32(nodes[0]))
}

// statusless reports whether the Kubernetes resource of id
// (apiVersion:Kind:namespace:name) is of a kind with no status to wait for.
func statusless(id string) bool {
	k, err := resid.Parse(id, resid.Kubernetes)
	return err == nil && health.Statusless(k.APIVersion, k.Kind)
}

// notPending is follows for every node but the pending ones (unchanged, to
// wait for): a chain step applies its nodes, and those have nothing to apply.
func notPending(follows, pending func(i int) bool) func(i int) bool {
	if follows == nil {
		return nil
	}
	return func(i int) bool { return !pending(i) && follows(i) }
}
