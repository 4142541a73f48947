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
// dependent. A delete may: a chain's deletes go one after another, each once
// the one before is gone (BatchInput.Chain). An apply may when nothing can
// hold its dependent back after it: when the run waits for no health, or
// when its kind has no status to wait for (a ConfigMap, a Secret, RBAC); an
// apply that may wait (a Deployment) ends its step, and its dependent waits
// for its health as before.
//
// Since chainFromStart (version 2 of chainChange) a chain may follow from its
// first node: a chain of local steps paid, per node, a local activity and its
// own state entry (a file and two fsyncs) on top of its call (chain-200:
// ~3.7 ms a node against ~3.2 in chain steps and the floor's ~2.5 per apply,
// docs/performance.md), where a chain step applies its nodes back to back
// and records them together (every 25). A
// chain shorter than chainMin still runs a step per node (chainMin): local
// steps cost less than a batch's round trip through the server for a few
// nodes, and keep each resource's own step in the Web UI's timeline.
//
// In version 1 a chain followed only once the history was long
// (longHistory). The history's length is GetCurrentHistoryLength plus the
// steps started: local steps done within the current workflow task are not
// in the first yet (a chain's steps may run for localStepBudget in one task),
// and counting every step again only brings chains' batches on earlier.
func (r *run) chainFollows(ctx workflow.Context, changes []engine.Change, wait bool, steps *nodeSteps) (follows func(i int) bool, least func() int) {
	v := changeVersion(ctx, chainChange, chainVersion)
	if v == workflow.DefaultVersion {
		return nil, nil
	}
	kind := func(i int) bool {
		c := changes[i]
		return c.Action == engine.Delete || !wait || statusless(c.ID)
	}
	if v < chainFromStart {
		return func(i int) bool { return longHistory(ctx, steps.started) && kind(i) }, nil
	}
	return kind, func() int { return chainMin(ctx, steps) }
}

// minLocalChain is the fewest nodes of a chain that run as one chain step
// while the run's steps are local and its history short (chainMin). A local
// step costs its call plus its marker and its own state entry; a chain step
// one round trip through the server (the task queue's dispatch, then a
// workflow task, 10-20 ms on a small machine) and then its calls back to
// back, a state entry per 25. Measured (bench rows of chains of 12 and 30
// ConfigMaps, medians of 7, docs/performance.md): as chain steps they took no
// longer than as local steps and wrote fewer history events and state
// objects; a chain of a few nodes keeps each resource's own step in the Web
// UI for the price of a few milliseconds.
const minLocalChain = 8

// chainMin is the batchWalk's chainMin from chainFromStart: any chain of two
// or more runs as a chain step when the steps are ordinary activities (each
// node's own costs that round trip) or the history is long; a chain of local
// steps needs minLocalChain nodes.
func chainMin(ctx workflow.Context, steps *nodeSteps) int {
	if !steps.local || longHistory(ctx, steps.started) {
		return 2
	}
	return minLocalChain
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
