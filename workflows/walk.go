package workflows

import "go.temporal.io/sdk/workflow"

// walk runs the nodes of a DAG one step each: a node starts once all of
// deps[node] finished successfully, at most limit at a time. start returns the
// node's activity future, or nil when the node needs no work. done is called
// with that (ready or nil) future and decides, by returning an error, whether
// the node failed. After the first failure, or once stopped (nil: never)
// reports true, no new node starts, in-flight ones run to completion, and walk
// returns the nodes that never started, in index order.
//
// It is the batchWalk of steps of one node, which starts them in the same
// order: the walk of runs recorded before batches.
func walk(ctx workflow.Context, deps [][]int32, limit int, stopped func() bool, start func(i int) workflow.Future, done func(i int, f workflow.Future) error) (notStarted []int) {
	// A node needs work when start gives it a future. batchWalk asks work
	// of a node of class "" once, right before it starts the node's step,
	// so work may start it and keep the future for start to return.
	futures := make([]workflow.Future, len(deps))
	return batchWalk{
		deps: deps, limit: limit, maxBatch: 1, stopped: stopped,
		work: func(i int) bool {
			futures[i] = start(i)
			return futures[i] != nil
		},
		class: func(int) string { return "" },
		start: func(nodes []int) []workflow.Future { return []workflow.Future{futures[nodes[0]]} },
		done:  done,
	}.run(ctx)
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
