package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/resid"
)

// maxBatch bounds the resources of one batch step: a crash re-does at most
// the resources since its last flush, and a batch's input and result stay a
// few kilobytes.
const maxBatch = 100

// maxPreviewBatch bounds the resources of one preview batch: its result (the
// changes, values cut to a few hundred bytes) stays well under a payload's
// limit.
const maxPreviewBatch = 200

// A batch step heartbeats: a crashed worker's batch is retried (after what it
// recorded) once batchHeartbeat passes, and a cancel reaches it with the
// answer to a heartbeat. Its StartToClose only backs that up.
const (
	batchHeartbeat = 5 * time.Second
	batchTimeout   = time.Hour
)

// errNotRun is the outcome of a batch's node that never ran: the batch
// stopped before it (a cancel, or a node before it failed).
var errNotRun = errors.New("not run")

// batchClass says which nodes may share a batch step: Kubernetes applies
// with Kubernetes applies, Kubernetes deletes with Kubernetes deletes. A
// Namespace delete (it waits for the namespace's content to go) and every
// Terraform step run alone.
func batchClass(c engine.Change) string {
	if c.Type != engine.Kubernetes {
		return ""
	}
	if c.Action == engine.Delete {
		if isNamespace(c.ID) {
			return ""
		}
		return "delete"
	}
	return "apply"
}

// isNamespace reports whether id is a Kubernetes Namespace's (v1:Namespace:name).
func isNamespace(id string) bool {
	k, err := resid.Parse(id, resid.Kubernetes)
	return err == nil && k.ClusterScoped() && k.APIVersion == "v1" && k.Kind == "Namespace"
}

// batchSummary names a batch step for the Web UI: "apply 50 resources:
// v1:ConfigMap:ns:cm-0 … v1:ConfigMap:ns:cm-49".
func batchSummary(verb string, ids []string) string {
	if len(ids) == 1 {
		return verb + " " + ids[0]
	}
	return fmt.Sprintf("%s %d resources: %s … %s", verb, len(ids), ids[0], ids[len(ids)-1])
}

// batchStep is the step of one batch: the options of one resource's step of
// the same kind (applyStep, deleteStep: task queue, retries), kept alive by
// heartbeats instead of a short StartToClose.
func batchStep(ctx workflow.Context, del bool, summary string) workflow.Context {
	if del {
		ctx = deleteStep(ctx, engine.Kubernetes, summary)
	} else {
		ctx = applyStep(ctx, engine.Kubernetes, summary)
	}
	o := workflow.GetActivityOptions(ctx)
	o.StartToCloseTimeout, o.HeartbeatTimeout = batchTimeout, batchHeartbeat
	// A batch is worth a trip through matching: eager dispatch would hand
	// every batch to the worker that ran the workflow task, and the rest of
	// a fleet would idle.
	o.DisableEagerExecution = true
	return workflow.WithActivityOptions(ctx, o)
}

// batchInput is the input of a batch step over nodes: what they share, once,
// and their IDs.
func (r *run) batchInput(nodes []int, node func(int) activities.NodeInput) activities.BatchInput {
	in := activities.BatchInput{Node: node(nodes[0]), IDs: make([]string, len(nodes))}
	in.Node.ID = ""
	for k, i := range nodes {
		in.IDs[k] = r.plan.Nodes[i].ID
	}
	return in
}

// fanOut turns one batch activity into a future per node of the batch: it
// schedules activity with in on stepCtx (the batch's step options), makes n
// futures and runs settle in a coroutine of its own, which waits for the
// batch (f) and sets node k's future through sets[k]: at once or, for a node
// with more to do (a wait for health), later.
//
// Every kind of batch issues the same commands in the same order: the
// activity scheduled, then the coroutine started. Recorded histories replay
// on that order.
func fanOut(ctx, stepCtx workflow.Context, activity, in any, n int, settle func(ctx workflow.Context, f workflow.Future, sets []workflow.Settable)) []workflow.Future {
	return fanOutFuture(ctx, workflow.ExecuteActivity(stepCtx, activity, in), n, settle)
}

// fanOutFuture is fanOut of a step already started (f): an activity or a
// local activity.
func fanOutFuture(ctx workflow.Context, f workflow.Future, n int, settle func(ctx workflow.Context, f workflow.Future, sets []workflow.Settable)) []workflow.Future {
	futures, sets := make([]workflow.Future, n), make([]workflow.Settable, n)
	for k := range n {
		futures[k], sets[k] = workflow.NewFuture(ctx)
	}
	workflow.Go(ctx, func(ctx workflow.Context) { settle(ctx, f, sets) })
	return futures
}

// startPreviewBatch starts one PreviewResources over nodes and returns one
// future per node, ready with its change (or why it cannot be previewed). It
// is a local activity when local is set (localPreviews).
func (r *run) startPreviewBatch(ctx workflow.Context, nodes []int, node func(int) activities.NodeInput, local bool) []workflow.Future {
	in := r.batchInput(nodes, node)
	in.Node.Delete = false
	in.DeferRefresh = r.deferRefresh
	step := batchStep(ctx, false, batchSummary("preview", in.IDs))
	var f workflow.Future
	if local {
		o := workflow.GetActivityOptions(step)
		f = workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: o.StartToCloseTimeout,
			RetryPolicy:         o.RetryPolicy,
			Summary:             o.Summary,
		}), acts.PreviewResources, in)
	} else {
		f = workflow.ExecuteActivity(step, acts.PreviewResources, in)
	}
	return fanOutFuture(ctx, f, len(nodes), func(ctx workflow.Context, f workflow.Future, sets []workflow.Settable) {
		var res activities.PreviewResult
		err := f.Get(ctx, &res)
		stale := make([]bool, len(nodes))
		for _, k := range res.Refresh {
			if k >= 0 && k < len(stale) {
				stale[k] = true
			}
		}
		for k := range nodes {
			switch {
			case err != nil:
				sets[k].Set(nil, err)
			case k < len(res.Errors) && res.Errors[k] != "":
				sets[k].Set(nil, errors.New(res.Errors[k]))
			case k < len(res.Changes) && in.DeferRefresh:
				sets[k].Set(activities.NodePreview{Change: res.Changes[k], Refresh: stale[k]}, nil)
			case k < len(res.Changes):
				sets[k].Set(res.Changes[k], nil)
			default:
				sets[k].Set(nil, fmt.Errorf("preview of %s: no result", in.IDs[k]))
			}
		}
	})
}

// startBatch starts one batch step over nodes (two or more, all applies or all deletes)
// and returns one future per node: ready with the node's outcome once the
// batch returns, or, for an applied node that must wait for health, once its
// WaitResource is done. A node the batch never ran gets errNotRun. The step
// is local when steps says so (localBatches). parallel above 1 makes it a
// pool of that many at once (batchWalk.pooled).
func (r *run) startBatch(ctx workflow.Context, nodes []int, changes []engine.Change, nodeInput func(int) activities.NodeInput, wait bool, steps *nodeSteps, parallel int) []workflow.Future {
	del := changes[nodes[0]].Action == engine.Delete
	in := r.batchInput(nodes, nodeInput)
	in.Delete = del
	in.Chain = r.isChain(nodes)
	if parallel > 1 {
		in.Parallel = parallel
	}
	verb, act := "apply", acts.ApplyResources
	if del {
		verb, act = "delete", acts.DeleteResources
	}
	began := workflow.Now(ctx)
	// An ordinary batch runs on r.wait: a cancel of the run reaches it, and it
	// stops after its resource in flight and reports what it did.
	summary := batchSummary(verb, in.IDs)
	step := batchStep(r.wait, del, summary)
	ordinary := func() workflow.Future { return workflow.ExecuteActivity(step, act, in) }
	var f workflow.Future
	if !in.Chain && steps.localBatches(ctx, len(r.plan.Nodes)) {
		f = steps.startLocal(ctx, localBatchTimeout, summary, act, in, ordinary)
	} else {
		f = ordinary()
	}
	return fanOutFuture(ctx, f, len(nodes), func(ctx workflow.Context, f workflow.Future, sets []workflow.Settable) {
		res, err := batchResult(ctx, f)
		if err != nil {
			var cancelled *temporal.CanceledError
			if errors.As(err, &cancelled) && r.stopped {
				err = nil // cancelled before it started: none ran
			}
		}
		r.timeOutcomes(nodes, began, res.Outcomes, wait, err != nil)
		var waiting []int // of nodes, those that wait for health
		for k := range nodes {
			switch {
			case k < len(res.Outcomes):
				if wait && res.Outcomes[k].Apply.Wait {
					waiting = append(waiting, k)
					continue
				}
				sets[k].Set(nil, nil)
			case k == len(res.Outcomes) && err != nil:
				sets[k].Set(nil, err)
			default:
				sets[k].Set(nil, errNotRun)
			}
		}
		r.startWaits(ctx, nodes, waiting, res.Outcomes, nodeInput, sets)
	})
}

// startWaits starts the health waits of a batch's nodes[k] for each k in
// waiting, as applied by outcomes[k], and sets sets[k] once each is done:
// one WaitResources for all when waitsTogether, else a WaitResource each.
func (r *run) startWaits(ctx workflow.Context, nodes, waiting []int, outcomes []activities.Outcome, nodeInput func(int) activities.NodeInput, sets []workflow.Settable) {
	for _, k := range waiting {
		r.markApplied(ctx, nodes[k])
	}
	if waitsTogether(ctx, len(waiting)) {
		ns, res := make([]int, len(waiting)), make([]activities.ApplyResult, len(waiting))
		for w, k := range waiting {
			ns[w], res[w] = nodes[k], outcomes[k].Apply
		}
		workflow.Go(ctx, func(ctx workflow.Context) {
			for w, err := range r.waitBatch(ctx, ns, res, nodeInput) {
				sets[waiting[w]].Set(nil, err)
			}
		})
		return
	}
	for _, k := range waiting {
		workflow.Go(ctx, func(ctx workflow.Context) {
			sets[k].Set(nil, r.waitHealthy(ctx, nodes[k], nodeInput(nodes[k]), outcomes[k].Apply))
		})
	}
}

// batchResult waits for a batch step and returns its result; for a batch
// that failed, what it did before failing (its failure's details) and the
// failure.
func batchResult(ctx workflow.Context, f workflow.Future) (activities.BatchResult, error) {
	var res activities.BatchResult
	err := f.Get(ctx, &res)
	if err != nil {
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Details(&res) != nil {
			res = activities.BatchResult{}
		}
	}
	return res, err
}

// timeOutcomes gives each resource of a batch its own times in its progress:
// the batch's start plus the steps before it, then its own step (Took). One
// that waits for health is finished by its wait; the one that failed starts
// after the last done; those the batch never ran did not start.
func (r *run) timeOutcomes(nodes []int, began time.Time, outcomes []activities.Outcome, wait, failed bool) {
	at := began
	for k, i := range nodes {
		node := r.node(i)
		switch {
		case k < len(outcomes):
			node.Started = at
			at = at.Add(outcomes[k].Took)
			if !wait || !outcomes[k].Apply.Wait {
				node.Finished = at
			}
		case k == len(outcomes) && failed:
			node.Started = at
		default:
			node.Started = time.Time{}
		}
	}
}
