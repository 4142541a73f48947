package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
)

// localStepBudget bounds how long a run of local steps keeps its workflow
// task: once that long has passed since the walk last got its task back
// after giving it, the next local step to finish starts a timer of
// yieldTimer first, so
// the task completes and the next one takes in what arrived meanwhile (a
// cancel). A cancel therefore stops a chain within about localStepBudget plus
// the step in flight, at the price of one timer per localStepBudget of steps.
const localStepBudget = time.Second

// yieldTimer is a variable so that a test can make it fire as late as a busy
// server may.
var yieldTimer = time.Millisecond

// nodeSteps says how a walk runs its nodes' steps that are not in a batch.
//
// A Kubernetes apply, or a delete of anything but a Namespace, is a local
// activity when the run's runtime steps run on the workflow's own task queue:
// the workflow's worker runs it without a round trip through the server and
// history records one marker, written with the workflow task, instead of
// three events and a workflow task of its own. That is what a chain costs
// most: its nodes come one at a time, so none shares a batch (~11 ms and 6.4
// events per node as ordinary activities; docs/performance.md). The step
// still records its own state entry, so a crash re-runs at most the local
// steps since the last completed workflow task, idempotently.
//
// Everything else stays an ordinary activity: Terraform steps and Namespace
// deletes (they wait for minutes, and heartbeat), waits for health, and every
// step of a run whose workspace names its own task queue, whose workers
// reach the cluster when the workflow's worker may not. A fleet loses little:
// a chain's nodes run one at a time whichever worker runs them, and on the
// workflow's own queue an ordinary single step was dispatched eagerly to the
// worker that ran the workflow task anyway; the batches of a plan over
// localBatchMax, what a fleet shares, stay ordinary and skip eager dispatch
// (a small plan's are local too: localBatches).
//
// A workflow task busy with local activities takes signals and cancellation
// in only when it completes. The walk gives it back at the latest every
// localStepBudget of local steps (and whenever it waits for an ordinary
// activity); during one long local step (a delete waiting for finalizers)
// the SDK completes it every ~8 s. A cancel lets the steps in flight finish
// either way, as it does for ordinary steps.
type nodeSteps struct {
	local bool
	// started counts the steps started: each adds at least one event to the
	// history, some not in GetCurrentHistoryLength yet (chainFollows).
	started int
	// yielded is when the walk last gave its workflow task back on purpose
	// and, from localYieldChange, got it back.
	yielded time.Time
	// budgetAfterYield: the budget counts from when the walk got its task
	// back after a yield (localYieldChange), not from when it gave it.
	budgetAfterYield bool
	// batches: whether batch steps are local too (nil: not decided yet;
	// localBatches decides at the first batch).
	batches *bool
	// pool: whether batch steps are pools (nil: not decided yet; pools
	// decides at the first batch that could be one).
	pool *bool
}

// localBatchMax (a variable for tests) is the largest plan whose batch steps
// are local (localBatches): its batches are small enough (a tenth of it
// each at the default parallelism of 10, at most maxBatch) that one runs for
// about a second at most.
var localBatchMax = 500

// localBatchTimeout bounds a local batch step: up to maxBatch calls, each
// bounded by the client's own timeouts, or a delete waiting for objects to go.
const localBatchTimeout = deleteCallTimeout

// localBatches reports whether a batch step of a plan of nodes resources is
// a local activity, since localBatchChange: when the run's other Kubernetes
// steps are (local) and the plan has up to localBatchMax resources. A small
// run's batches then run inside its workflow task, one after another as the
// walk starts them, instead of each going through the task queue and coming
// back in a workflow task of its own: a flat apply of 200 resources was ten
// such round trips, most of what it cost beyond its requests.
//
// A local batch is not cut short by a cancel: the run takes the cancel in
// when its workflow task completes, after the local steps in flight (or
// every ~8 s), then starts nothing new, as with a node's local step. That is
// why only small plans' batches are local, and never a chain step
// (startBatch), which runs its nodes one after another for as long as the
// chain is. A larger plan's batches stay ordinary, spread over the fleet,
// and stop after their resource in flight when the run is cancelled.
func (s *nodeSteps) localBatches(ctx workflow.Context, nodes int) bool {
	if s.batches == nil {
		local := s.local && nodes <= localBatchMax &&
			changeVersion(ctx, localBatchChange, localBatchVersion) >= localBatchVersion
		s.batches = &local
	}
	return *s.batches
}

// pools reports whether the walk of a plan of nodes resources takes the
// ready nodes of a class as one pool step (batchWalk.pooled), since
// poolChange: when its batch steps are local (localBatches), so that a
// step's nodes all go within the worker that runs the workflow. A pool of
// a small plan then goes as fast as its requests let every slot, where a
// batch per slot ends when its own slowest requests let it, and the walk
// waited for the last; and a flat apply is one step, not one per slot.
func (s *nodeSteps) pools(ctx workflow.Context, nodes int) bool {
	if s.pool == nil {
		pool := s.localBatches(ctx, nodes) && changeVersion(ctx, poolChange, poolVersion) >= poolVersion
		s.pool = &pool
	}
	return *s.pool
}

// newNodeSteps decides, once per run, how its nodes' steps run.
func newNodeSteps(ctx workflow.Context) *nodeSteps {
	if runtimeQueue(ctx) != "" || changeVersion(ctx, localNodeChange, localNodeVersion) == workflow.DefaultVersion {
		return &nodeSteps{}
	}
	after := changeVersion(ctx, localYieldChange, localYieldVersion) >= localYieldVersion
	return &nodeSteps{local: true, yielded: workflow.Now(ctx), budgetAfterYield: after}
}

// start starts the step that changes node in as c says (apply or delete) and
// returns its future. It is the one place a node's step is chosen: a step
// that must follow the apply (waiting for the resource to become healthy)
// chains after this one (applyNode).
func (s *nodeSteps) start(ctx workflow.Context, c engine.Change, in activities.NodeInput) workflow.Future {
	s.started++
	del := c.Action == engine.Delete
	ordinary := func() workflow.Future {
		if del {
			return workflow.ExecuteActivity(deleteStep(ctx, c.Type, "delete "+in.ID), acts.DeleteResource, in)
		}
		return workflow.ExecuteActivity(applyStep(ctx, c.Type, "apply "+in.ID), acts.ApplyResource, in)
	}
	if s.local && c.Type == engine.Kubernetes && !(del && isNamespace(c.ID)) {
		if del {
			return s.startLocal(ctx, deleteCallTimeout, "delete "+in.ID, acts.DeleteResource, in, ordinary)
		}
		return s.startLocal(ctx, shortCallTimeout, "apply "+in.ID, acts.ApplyResource, in, ordinary)
	}
	return ordinary()
}

// startLocal runs activity as a local step of up to timeout, summarised for
// the Web UI. Its future is ready once the step is done and, when the walk
// kept its workflow task for localStepBudget, the task was given back. A step
// the worker refused because it is stopping runs as ordinary() instead, so
// another worker takes it and, after it, the workflow task (the next local
// steps run wherever that task runs).
func (s *nodeSteps) startLocal(ctx workflow.Context, timeout time.Duration, summary string, activity, in any, ordinary func() workflow.Future) workflow.Future {
	step := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: timeout,
		RetryPolicy:         retryPolicy,
		Summary:             summary,
	}), activity, in)
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		if err := step.Get(ctx, nil); isWorkerStopping(err) {
			step = ordinary()
			_ = step.Get(ctx, nil)
		}
		if now := workflow.Now(ctx); now.Sub(s.yielded) >= localStepBudget {
			s.yielded = now                     // the other steps finishing in this task need not yield too
			_ = workflow.Sleep(ctx, yieldTimer) // its outcome does not matter: the task was given back
			if s.budgetAfterYield {
				s.yielded = workflow.Now(ctx)
			}
		}
		set.Chain(step)
	})
	return f
}

// isWorkerStopping says whether err is a local step's refusal by a stopping
// worker.
func isWorkerStopping(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == activities.ErrTypeWorkerStopping
}
