package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
)

// Waiting is cheap to resume: a crashed worker's wait is retried once
// waitHeartbeat passes without a heartbeat, and the retry keeps the first
// attempt's deadline. The activity ends itself at its resource's timeout;
// StartToClose only backs that up.
const (
	waitHeartbeat = 10 * time.Second
	waitSlack     = time.Minute
)

// waitsForHealth reports whether this run's applied nodes wait for health
// (false when replaying a run recorded before they did).
func waitsForHealth(ctx workflow.Context) bool {
	return changeVersion(ctx, waitChange, waitVersion) >= waitVersion
}

// applyNode is one applied node: its apply step (steps.start), then, when its result says
// the resource is not healthy yet, WaitResource. The future is ready when
// both are done, with the first error. A node whose wait failed is marked in
// r.waitFailed: its resource was applied, so a compensation must undo it.
func (r *run) applyNode(ctx workflow.Context, wait bool, steps *nodeSteps, i int, in activities.NodeInput, c engine.Change) workflow.Future {
	apply := steps.start(ctx, c, in)
	if !wait {
		return apply
	}
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		var res activities.ApplyResult
		if err := apply.Get(ctx, &res); err != nil || !res.Wait {
			set.Set(nil, err)
			return
		}
		r.markApplied(ctx, i)
		set.Set(nil, r.waitHealthy(ctx, i, in, res))
	})
	return f
}

// markApplied tells the walk that node i is applied and now waits for its
// health (see run.applied).
func (r *run) markApplied(ctx workflow.Context, i int) {
	if r.applied != nil {
		r.applied.Send(ctx, i)
	}
}

// waitHealthy runs WaitResource for node i, applied with result res, and
// shows how its health goes.
func (r *run) waitHealthy(ctx workflow.Context, i int, in activities.NodeInput, res activities.ApplyResult) error {
	r.beginWait(ctx, i, res)
	var w activities.WaitResult
	err := workflow.ExecuteActivity(waitStep(ctx, res.Timeout, "wait for "+in.ID), acts.WaitResource, in).Get(ctx, &w)
	r.endWait(ctx, i, res, w, err)
	return err
}

// beginWait shows that node i, applied with result res, waits for health.
func (r *run) beginWait(ctx workflow.Context, i int, res activities.ApplyResult) {
	node := r.node(i)
	if node.Health == "" {
		at, _ := slices.BinarySearch(r.healthy, i)
		r.healthy = slices.Insert(r.healthy, at, i)
	}
	node.Health = res.Health.String()
	r.showHealth(ctx)
}

// endWait shows how node i's wait went (w, or its failure err). A node
// whose wait failed is marked in r.waitFailed: its resource was applied, so
// a compensation must undo it.
func (r *run) endWait(ctx workflow.Context, i int, res activities.ApplyResult, w activities.WaitResult, err error) {
	node := r.node(i)
	if err != nil {
		if r.waitFailed == nil {
			r.waitFailed = map[int]bool{}
		}
		r.waitFailed[i] = true
		node.Health += " → " + rootMessage(err)
	} else {
		node.Health = transitions(res.Health, w)
	}
	r.showHealth(ctx)
}

// waitsTogether reports whether the health waits of n nodes applied by one
// batch step share one WaitResources step: when there are several, the
// history is long, and the run was not recorded before waitBatchChange.
// Each resource's wait then ends with the last of them, which holds back
// its dependents as long; below longHistory each keeps its own step, named
// in the Web UI's timeline.
func waitsTogether(ctx workflow.Context, n int) bool {
	return n > 1 && longHistory(ctx, 0) &&
		changeVersion(ctx, waitBatchChange, waitBatchVersion) >= waitBatchVersion
}

// waitBatch runs one WaitResources for nodes, applied with results res
// (each not healthy yet), and returns the failure of each node's wait.
func (r *run) waitBatch(ctx workflow.Context, nodes []int, res []activities.ApplyResult, nodeInput func(int) activities.NodeInput) []error {
	in := r.batchInput(nodes, nodeInput)
	timeout := time.Duration(0)
	for k, i := range nodes {
		r.beginWait(ctx, i, res[k])
		timeout = max(timeout, res[k].Timeout)
	}
	var out activities.WaitBatchResult
	err := workflow.ExecuteActivity(waitStep(ctx, timeout, batchSummary("wait for", in.IDs)), acts.WaitResources, in).Get(ctx, &out)
	errs := make([]error, len(nodes))
	for k, i := range nodes {
		var w activities.WaitResult
		switch {
		case err != nil:
			errs[k] = err
		case k < len(out.Errors) && out.Errors[k] != "":
			errs[k] = errors.New(out.Errors[k])
		case k < len(out.Waits):
			w = out.Waits[k]
		default:
			errs[k] = fmt.Errorf("wait for %s: no result", in.IDs[k])
		}
		r.endWait(ctx, i, res[k], w, errs[k])
	}
	return errs
}

// maxHealthShown bounds the resources the run's details show the health of.
const maxHealthShown = 50

// showHealth sets the run's current details (the Web UI shows them on the
// run's page) to the health of every node that waited or waits, in plan order.
func (r *run) showHealth(ctx workflow.Context) {
	var b strings.Builder
	b.WriteString(r.summaryLine() + "\n\n**Health**\n\n")
	// In plan order, without going through every node each time, and at
	// most maxHealthShown of them: the details are for a glance.
	for _, i := range r.healthy[:min(len(r.healthy), maxHealthShown)] {
		n := r.progress.Nodes[i]
		b.WriteString("- `" + n.ID + "`: " + n.Health + "\n")
	}
	if more := len(r.healthy) - maxHealthShown; more > 0 {
		fmt.Fprintf(&b, "- and %d more\n", more)
	}
	workflow.SetCurrentDetails(ctx, b.String())
}

// transitions renders how a node's health went, e.g. "Progressing: 0/3
// replicas available → Progressing: 1/3 replicas available → Healthy".
func transitions(applied health.Result, w activities.WaitResult) string {
	steps := []string{applied.String()}
	for _, h := range append(w.Transitions, w.Health) {
		if s := h.String(); s != steps[len(steps)-1] {
			steps = append(steps, s)
		}
	}
	return strings.Join(steps, " → ")
}

// waitStep is the step that waits up to timeout for one resource's health.
func waitStep(ctx workflow.Context, timeout time.Duration, summary string) workflow.Context {
	if timeout <= 0 {
		timeout = engine.DefaultWaitTimeout
	}
	return runtimeStep(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout + waitSlack,
		HeartbeatTimeout:    waitHeartbeat,
		RetryPolicy:         retryPolicy,
		Summary:             summary,
		WaitForCancellation: true,
	})
}

// anyPendingWait reports whether a change is an unchanged resource to wait for.
func anyPendingWait(changes []engine.Change) bool {
	for _, c := range changes {
		if c.Action == engine.UnChanged && c.Wait != nil {
			return true
		}
	}
	return false
}

// waitUnchanged waits for the health of unchanged nodes whose preview found
// them not healthy (engine.Change.Wait), as applied ones wait: one
// WaitResource each, or one WaitResources for all when the history is long
// (startWaits). Each future is ready when its node's wait is done.
func (r *run) waitUnchanged(ctx workflow.Context, nodes []int, changes []engine.Change, nodeInput func(int) activities.NodeInput) []workflow.Future {
	futures, sets := make([]workflow.Future, len(nodes)), make([]workflow.Settable, len(nodes))
	outcomes, waiting := make([]activities.Outcome, len(nodes)), make([]int, len(nodes))
	for k, i := range nodes {
		futures[k], sets[k] = workflow.NewFuture(ctx)
		w := changes[i].Wait
		outcomes[k].Apply = activities.ApplyResult{Wait: true, Timeout: w.Timeout, Health: w.Health}
		waiting[k] = k
	}
	r.startWaits(ctx, nodes, waiting, outcomes, nodeInput, sets)
	return futures
}
