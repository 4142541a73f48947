package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"
)

// Temporal ends a run whose history passes 51,200 events, and a run ended that
// way never finishes its release. A walk therefore stops starting steps once
// the history reaches historyBudget, leaving room for the steps in flight, the
// undoing of a failed apply's changes and the release's finish; the release
// fails, naming how far it got, and an apply run again goes on from there
// (what is done is unchanged). Batches keep a flat spec of 50,000 resources
// near 5,000 events; a long chain of single steps is what can get here.
const historyLimit = 51200

// The budgets are variables so a test can reach them with a short run.
var (
	historyBudget      = 40000
	compensationBudget = 49000
)

// historyFull reports whether the run's history reached historyBudget.
// GetCurrentHistoryLength is the length as of the current workflow task, the
// same when the run is replayed. Local steps done in the task are not in it
// yet (a marker each, written when the task completes, at least every
// localStepBudget): the 11,200 events between budget and limit cover them.
func (r *run) historyFull(ctx workflow.Context) bool {
	if workflow.GetInfo(ctx).GetCurrentHistoryLength() < historyBudget {
		return false
	}
	r.outOfHistory = true
	return true
}

// stopTest is the stop test of a walk: a cancel, or a history near its limit.
func (r *run) stopTest(ctx workflow.Context) func() bool {
	return func() bool { return r.isStopped() || r.historyFull(ctx) }
}

// historyErr is the error of a walk stopped by historyFull with notRun nodes
// not run.
func historyErr(ctx workflow.Context, notRun int) error {
	return fmt.Errorf("stopped at %d history events, near Temporal's limit of %d per run: %d resources not run; apply again to go on from here",
		workflow.GetInfo(ctx).GetCurrentHistoryLength(), historyLimit, notRun)
}

// longHistoryShare of historyBudget is the history length from which a walk
// trades a step per resource for fewer, larger steps: a chain of the graph
// runs as batch steps (chainFollows), and the health waits after a batch
// share one step (waitsTogether). Below it each resource keeps its own step:
// visible by name in the Web UI's timeline, and as cheap as a local
// activity; a run only gets this far with thousands of resources that share
// no batch.
const longHistoryShare = 4

// longHistory reports whether the run's history, with unwritten events not
// in GetCurrentHistoryLength yet (local steps done in this workflow task),
// reached historyBudget / longHistoryShare.
func longHistory(ctx workflow.Context, unwritten int) bool {
	return workflow.GetInfo(ctx).GetCurrentHistoryLength()+unwritten >= historyBudget/longHistoryShare
}
