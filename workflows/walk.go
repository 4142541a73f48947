package workflows

import "go.temporal.io/sdk/workflow"

// walk runs the nodes of a DAG: a node starts once all of deps[node] finished
// successfully, at most limit at a time. start returns the node's activity future,
// or nil when the node needs no work. done is called with that (ready or nil)
// future and decides, by returning an error, whether the node failed. After the
// first failure, or once stopped (nil: never) reports true, no new node starts,
// in-flight ones run to completion, and walk returns the nodes that never
// started, in index order.
func walk(ctx workflow.Context, deps [][]int32, limit int, stopped func() bool, start func(i int) workflow.Future, done func(i int, f workflow.Future) error) (notStarted []int) {
	n := len(deps)
	waiting, dependents, ready := graphOf(deps)
	started := make([]bool, n)
	futures := make([]workflow.Future, n)
	failed := false
	finish := func(i int) {
		if err := done(i, futures[i]); err != nil {
			failed = true
			return
		}
		for _, j := range dependents[i] {
			if waiting[j]--; waiting[j] == 0 {
				ready = append(ready, j)
			}
		}
	}

	// One channel of completions instead of a Selector over every future: a
	// Selector rescans all its cases on each Select, which is quadratic in nodes.
	completions := workflow.NewBufferedChannel(ctx, limit)
	inflight := 0
	for {
		for !failed && inflight < limit && len(ready) > 0 && (stopped == nil || !stopped()) {
			i := ready[0]
			ready = ready[1:]
			started[i] = true
			f := start(i)
			if f == nil {
				finish(i)
				continue
			}
			futures[i] = f
			inflight++
			workflow.Go(ctx, func(ctx workflow.Context) {
				_ = f.Get(ctx, nil) // only waits; done reads the outcome
				completions.Send(ctx, i)
			})
		}
		if inflight == 0 {
			break
		}
		var i int
		completions.Receive(ctx, &i)
		inflight--
		finish(i)
	}
	for i, s := range started {
		if !s {
			notStarted = append(notStarted, i)
		}
	}
	return notStarted
}

// graphOf returns what a walk of deps tracks: how many nodes each node still
// waits for, the nodes that depend on each, and the nodes ready at once.
func graphOf(deps [][]int32) (waiting []int, dependents [][]int, ready []int) {
	waiting = make([]int, len(deps))
	dependents = make([][]int, len(deps))
	for i, ds := range deps {
		waiting[i] = len(ds)
		for _, d := range ds {
			dependents[d] = append(dependents[d], i)
		}
		if len(ds) == 0 {
			ready = append(ready, i)
		}
	}
	return waiting, dependents, ready
}
