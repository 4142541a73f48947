package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"
)

// batchWalk runs the nodes of a DAG as walk does, but ready nodes of one class
// go together into one step: a step (a batch, or a node alone) takes one of the
// limit slots until each of its nodes is done, so at most limit steps run at
// once. A batch takes up to maxBatch ready nodes, fewer when that leaves a
// slot free: the ready nodes are spread over the free slots.
type batchWalk struct {
	deps     [][]int32
	limit    int
	maxBatch int
	// stopped (nil: never) ends the walk as walk's does.
	stopped func() bool
	// work reports whether node i needs a step at all; one that does not is
	// done (done(i, nil)) once ready, without taking a slot.
	work func(i int) bool
	// class says which nodes may share a step: ready nodes of one non-empty
	// class may; a node of class "" runs alone.
	class func(i int) string
	// follows (nil: never) says whether node i's step may go on to its one
	// dependent, so a chain of the graph (each node the only dependent of the
	// one before, and depending on nothing else left) runs as one step of up
	// to maxBatch nodes, in order, instead of one step per node: what a long
	// chain costs in time and in history. A node may be followed when nothing
	// its dependent needs is still to come once its step reached it: no wait
	// for its health, no delete still going (see walkChanges).
	follows func(i int) bool
	// chainMin (nil: 2) is the fewest nodes a chain step may have, asked
	// each time one could start: a shorter chain runs a step per node.
	chainMin func() int
	// start starts the step of nodes (all of one class, or one node, or a
	// chain of one class in dependency order) and returns one future per
	// node, ready when that node is done.
	start func(nodes []int) []workflow.Future
	// pooled (nil: never) says whether a step of node i's class, of two
	// nodes or more, may be a pool when more than one slot is free: one step
	// of every ready node of the class (up to maxPool) that takes every free
	// slot and has that many of its nodes going at once, a free worker
	// taking the next node (startPool, with that number). Batches of a fixed
	// share each end when their own slowest requests let them, and the walk
	// waits for the last.
	pooled    func(i int) bool
	maxPool   int
	startPool func(nodes []int, parallel int) []workflow.Future
	// done decides, as walk's does, whether node i failed.
	done func(i int, f workflow.Future) error
	// appliedDeps (nil: none) are, for each node, those of its deps that it
	// needs only applied: it may start once each of them is applied (an
	// index received on applied) or done, whichever comes first. A step
	// sends on applied the nodes it applied that go on to wait for health.
	appliedDeps [][]int32
	applied     workflow.ReceiveChannel
	// freeWaits: a step gives its slots back once each of its nodes is
	// applied (received on applied) or done, instead of once each is done:
	// a node waiting for its health holds no slot, so limit bounds the
	// steps that apply or delete, not the waits after them. Without it a
	// chart of more Deployments than limit rolled them out limit at a time,
	// and the next kind tier waited for a slot behind their waits. At most
	// waitsPerSlot*limit nodes wait without a slot; past that a step keeps
	// its slots until its nodes are done.
	freeWaits bool
}

// waitsPerSlot bounds the nodes that wait for their health without holding
// a slot (batchWalk.freeWaits), per slot: each wait watches its object (and
// a workload's Pods).
const waitsPerSlot = 10

// run walks the graph and returns the nodes that never started, in index order.
func (w batchWalk) run(ctx workflow.Context) (notStarted []int) {
	n := len(w.deps)
	waiting, dependents, ready := graphOf(w.deps)
	early := earlyDependents(w.appliedDeps, dependents)
	started := make([]bool, n)
	futures := make([]workflow.Future, n)
	failed := false
	// released[i]: node i's early dependents were counted down already.
	released := make([]bool, n)
	countDown := func(j int) {
		// a node already started came in the step of the chain before it
		if waiting[j]--; waiting[j] == 0 && !started[j] {
			ready = append(ready, j)
		}
	}
	release := func(i int) {
		if early == nil || released[i] {
			return
		}
		released[i] = true
		for _, j := range early[i] {
			countDown(j)
		}
	}
	finish := func(i int) {
		if err := w.done(i, futures[i]); err != nil {
			failed = true
			return
		}
		for _, j := range dependents[i] {
			countDown(j)
		}
		release(i)
	}
	// next is the node that may follow i in its step (a chain), if any.
	next := func(i int) (int, bool) {
		if w.follows == nil || len(dependents[i]) != 1 || !w.follows(i) {
			return 0, false
		}
		j := dependents[i][0]
		return j, waiting[j] == 1 && !started[j] && w.work(j) && w.class(j) == w.class(i)
	}
	// stepOf[i] is the step node i runs in; left[s] counts its nodes not
	// done, held[s] the slots it holds (a pool's: more than one), 0 once
	// given back; unapplied[s] (with freeWaits) its nodes neither applied
	// nor done, and waitingFree the nodes applied, not done, whose step gave
	// its slots back.
	stepOf := make([]int, n)
	var left, held, unapplied []int
	appliedOrDone := make([]bool, n)
	waitingFree := 0
	completions := workflow.NewBufferedChannel(ctx, w.limit*max(w.maxBatch, 1))
	inflight := 0
	giveBack := func(s int) {
		inflight -= held[s]
		held[s] = 0
	}
	// applies marks node i applied or done (after left[s] counted it done),
	// and gives its step's slots back once none of its nodes is still to
	// apply, while few enough wait.
	applies := func(i int) {
		if !w.freeWaits || appliedOrDone[i] {
			return
		}
		appliedOrDone[i] = true
		s := stepOf[i]
		if unapplied[s]--; unapplied[s] > 0 || held[s] == 0 {
			return
		}
		// Every node of the step not done (left[s]) waits for its health.
		if waitingFree+left[s] <= waitsPerSlot*w.limit {
			giveBack(s)
			waitingFree += left[s]
		}
	}
	for {
		for !failed && inflight < w.limit && len(ready) > 0 && (w.stopped == nil || !w.stopped()) {
			i := ready[0]
			if !w.work(i) {
				ready = ready[1:]
				started[i] = true
				finish(i)
				continue
			}
			var nodes []int
			free, slots := w.limit-inflight, 1
			nodes, ready = w.take(ready, free, w.maxBatch)
			pool := len(nodes) > 1 && free > 1 && w.pooled != nil && w.pooled(nodes[0])
			if pool {
				c := w.class(nodes[0])
				var more []int
				more, ready = w.takeOf(ready, c, w.count(ready, c, max(w.maxPool-len(nodes), 0)))
				nodes, slots = append(nodes, more...), free
			}
			if len(nodes) == 1 && w.class(nodes[0]) != "" {
				for j, ok := next(nodes[0]); ok && len(nodes) < w.maxBatch; j, ok = next(j) {
					nodes = append(nodes, j)
				}
				if w.chainMin != nil && len(nodes) < w.chainMin() {
					nodes = nodes[:1]
				}
			}
			s := len(left)
			left, held, unapplied = append(left, len(nodes)), append(held, slots), append(unapplied, len(nodes))
			inflight += slots
			var fs []workflow.Future
			if pool {
				fs = w.startPool(nodes, slots)
			} else {
				fs = w.start(nodes)
			}
			for k, f := range fs {
				j := nodes[k]
				started[j], futures[j], stepOf[j] = true, f, s
			}
			forward(ctx, nodes, fs, completions)
		}
		// Every step in flight holds a slot, or gave them back with its
		// nodes still waiting counted in waitingFree.
		if inflight == 0 && waitingFree == 0 {
			break
		}
		completed := func(i int) {
			s := stepOf[i]
			if held[s] == 0 && appliedOrDone[i] {
				waitingFree-- // it waited without a slot
			}
			left[s]--
			applies(i)
			if left[s] == 0 && held[s] > 0 {
				giveBack(s)
			}
			finish(i)
		}
		if w.applied == nil {
			var i int
			completions.Receive(ctx, &i)
			completed(i)
			continue
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(completions, func(c workflow.ReceiveChannel, _ bool) {
			var i int
			c.Receive(ctx, &i)
			completed(i)
		})
		sel.AddReceive(w.applied, func(c workflow.ReceiveChannel, _ bool) {
			var i int
			c.Receive(ctx, &i)
			if i >= 0 && i < n {
				release(i)
				applies(i)
			}
		})
		sel.Select(ctx)
	}
	for i, s := range started {
		if !s {
			notStarted = append(notStarted, i)
		}
	}
	return notStarted
}

// earlyDependents moves, out of dependents, each dependent that needs its
// node only applied (appliedDeps), and returns them by node: counted down
// when the node is applied or done, whichever comes first. Nil when there
// are none.
func earlyDependents(appliedDeps [][]int32, dependents [][]int) [][]int {
	var early [][]int
	for j, ds := range appliedDeps {
		for _, d := range ds {
			if early == nil {
				early = make([][]int, len(dependents))
			}
			if at := slices.Index(dependents[d], j); at >= 0 {
				dependents[d] = slices.Delete(dependents[d], at, at+1)
				early[d] = append(early[d], j)
			}
		}
	}
	return early
}

// take removes from ready the nodes of the next step: ready[0] alone, or with
// the other ready nodes of its class that need work, as many as spread them
// over free slots (at most most). It keeps the order of the rest, which
// shares ready's array; the step's nodes do not.
//
// It looks no further into ready than it must: counting the class's nodes
// stops once there are enough for a full step in every free slot, and the
// rest past the step's last node stays where it is: a large flat walk
// scanned and copied all its ready nodes for every step.
func (w batchWalk) take(ready []int, free, most int) (nodes, rest []int) {
	c := w.class(ready[0])
	if c == "" || most <= 1 {
		return []int{ready[0]}, ready[1:]
	}
	same := w.count(ready, c, most*free)
	return w.takeOf(ready, c, min(most, (same+free-1)/free))
}

// count counts the ready nodes of class c that need work, up to enough.
func (w batchWalk) count(ready []int, c string, enough int) int {
	same := 0
	for _, i := range ready {
		if same == enough {
			break
		}
		if w.class(i) == c && w.work(i) {
			same++
		}
	}
	return same
}

// takeOf removes from ready its first size nodes of class c that need work
// (there are that many), keeping the order of the rest as take does.
func (w batchWalk) takeOf(ready []int, c string, size int) (nodes, rest []int) {
	if size == 0 {
		return nil, ready
	}
	nodes = make([]int, 0, size)
	var others []int // before the step's last node, not in it
	last := 0
	for at, i := range ready {
		if len(nodes) == size {
			break
		}
		if w.class(i) == c && w.work(i) {
			nodes, last = append(nodes, i), at
		} else {
			others = append(others, i)
		}
	}
	// The others go right before what follows the step's last node, in
	// their order: rest is then a slice of ready's array.
	start := last + 1 - len(others)
	copy(ready[start:last+1], others)
	return nodes, ready[start:]
}

// forward sends nodes[k] on completions once fs[k] is ready, from one
// coroutine for the step. Each time it runs it sends, in step order, every
// node ready by then, as one coroutine per node visited in that order would
// (nodes done together therefore arrive in the same order as before). One
// per node cost the workflow's every dispatch a switch to and from each
// waiting node's coroutine: the SDK runs every live coroutine each time it
// runs any, so a walk paid per node in flight for each step that ended.
func forward(ctx workflow.Context, nodes []int, fs []workflow.Future, completions workflow.Channel) {
	workflow.Go(ctx, func(ctx workflow.Context) {
		pending := make([]int, len(fs))
		for k := range pending {
			pending[k] = k
		}
		for {
			rest := pending[:0]
			for _, k := range pending {
				if fs[k].IsReady() {
					completions.Send(ctx, nodes[k])
				} else {
					rest = append(rest, k)
				}
			}
			if pending = rest; len(pending) == 0 {
				return
			}
			sel := workflow.NewSelector(ctx)
			for _, k := range pending {
				sel.AddFuture(fs[k], func(workflow.Future) {})
			}
			sel.Select(ctx)
		}
	})
}
