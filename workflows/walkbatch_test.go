package workflows

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// TestBatchWalkRunsChainsAsSteps: a chain of the graph goes as steps of up to
// maxBatch nodes in dependency order, cut where follows says a node may not
// be followed; a node waiting for two others never joins a chain's step;
// without follows every chain node is a step of its own, as before.
func TestBatchWalkRunsChainsAsSteps(t *testing.T) {
	chain := func(from, to int, deps [][]int32) [][]int32 {
		for i := from + 1; i < to; i++ {
			deps[i] = []int32{int32(i - 1)}
		}
		return deps
	}
	// a=0 -> b=1 -> d=3 <- c=2
	join := [][]int32{nil, {0}, nil, {1, 2}}
	for _, c := range []struct {
		name     string
		deps     [][]int32
		limit    int
		follows  func(i int) bool
		chainMin func() int
		want     string
	}{
		{"long chain, cut at 120", chain(0, 250, make([][]int32, 250)), 10, func(i int) bool { return i != 120 }, nil,
			"[0-99] [100-120] [121-220] [221-249]"},
		{"long chain, no follows", chain(0, 5, make([][]int32, 5)), 10, nil, nil, "[0] [1] [2] [3] [4]"},
		{"two chains side by side", chain(5, 10, chain(0, 5, make([][]int32, 10))), 2, func(int) bool { return true }, nil, "[0-4] [5-9]"},
		{"a join ends a chain", join, 10, func(int) bool { return true }, nil, "[0-1] [2] [3]"},
		// chainMin: a chain step needs 8 nodes; a shorter chain, or the
		// tail of a long one, is a step per node.
		{"chain of chainMin", chain(0, 8, make([][]int32, 8)), 10, func(int) bool { return true }, func() int { return 8 }, "[0-7]"},
		{"chain under chainMin", chain(0, 7, make([][]int32, 7)), 10, func(int) bool { return true }, func() int { return 8 }, "[0] [1] [2] [3] [4] [5] [6]"},
		{"long chain's tail under chainMin", chain(0, 105, make([][]int32, 105)), 10, func(int) bool { return true }, func() int { return 8 },
			"[0-99] [100] [101] [102] [103] [104]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			s.SetLogger(quietLogger)
			env := s.NewTestWorkflowEnvironment()
			var steps []string
			runWalk(t, env, func(ctx workflow.Context) batchWalk {
				return batchWalk{
					deps: c.deps, limit: c.limit, maxBatch: maxBatch,
					work:     func(int) bool { return true },
					class:    func(int) string { return "k" },
					follows:  c.follows,
					chainMin: c.chainMin,
					start: func(nodes []int) []workflow.Future {
						for k := 1; k < len(nodes); k++ {
							if nodes[k] != nodes[k-1]+1 {
								t.Errorf("step %v is not a run of consecutive nodes", nodes)
							}
						}
						if len(nodes) == 1 {
							steps = append(steps, fmt.Sprintf("[%d]", nodes[0]))
						} else {
							steps = append(steps, fmt.Sprintf("[%d-%d]", nodes[0], nodes[len(nodes)-1]))
						}
						futures := make([]workflow.Future, len(nodes))
						for k := range nodes {
							f, set := workflow.NewFuture(ctx)
							set.Set(nil, nil)
							futures[k] = f
						}
						return futures
					},
					done: func(int, workflow.Future) error { return nil },
				}
			})
			if got := fmt.Sprint(steps); got != "["+c.want+"]" {
				t.Errorf("steps %s, want [%s]", got, c.want)
			}
		})
	}
}

// TestBatchWalkAppliedDeps: a node that needs its dependency only applied
// starts once the dependency's step says it is applied, while the
// dependency still waits for its health; one that needs it healthy starts
// only once it is done. The ingress-nginx install: the Job (0) completes only
// once the webhook configuration (1) exists.
func TestBatchWalkAppliedDeps(t *testing.T) {
	for _, c := range []struct {
		name    string
		applied [][]int32
		want    string
	}{
		{"applied only", [][]int32{nil, {0}, nil}, "start 0, applied 0, start 1, done 0, start 2, done 1, done 2"},
		{"healthy", nil, "start 0, deadlock"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			s.SetLogger(quietLogger)
			env := s.NewTestWorkflowEnvironment()
			var events []string
			env.ExecuteWorkflow(func(ctx workflow.Context) error {
				var ch workflow.Channel
				if c.applied != nil {
					ch = workflow.NewBufferedChannel(ctx, 3)
				}
				webhook, setWebhook := workflow.NewFuture(ctx)
				w := batchWalk{
					deps: [][]int32{nil, {0}, {0}}, limit: 4, maxBatch: 1,
					appliedDeps: c.applied,
					work:        func(int) bool { return true },
					class:       func(int) string { return "" },
					start: func(nodes []int) []workflow.Future {
						i := nodes[0]
						events = append(events, fmt.Sprint("start ", i))
						f, set := workflow.NewFuture(ctx)
						switch i {
						case 0: // applied at once, healthy once the webhook exists
							workflow.Go(ctx, func(ctx workflow.Context) {
								if ch != nil {
									events = append(events, "applied 0")
									ch.Send(ctx, 0)
								}
								ok, _ := workflow.AwaitWithTimeout(ctx, time.Hour, webhook.IsReady)
								if !ok {
									events = append(events, "deadlock")
									set.Set(nil, errors.New("the Job never completed"))
									return
								}
								set.Set(nil, nil)
							})
						case 1:
							setWebhook.Set(nil, nil)
							set.Set(nil, nil)
						default:
							set.Set(nil, nil)
						}
						return []workflow.Future{f}
					},
					done: func(i int, f workflow.Future) error {
						err := f.Get(ctx, nil)
						if err == nil {
							events = append(events, fmt.Sprint("done ", i))
						}
						return err
					},
				}
				if ch != nil {
					w.applied = ch
				}
				w.run(ctx)
				return nil
			})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(events, ", "); got != c.want {
				t.Errorf("events\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestBatchWalkKeepsACoroutinePerStep: while a walk of 1,000 nodes has ten
// steps of 100 in flight, the workflow holds a coroutine per step (and the
// steps' own), not one per node: the SDK switches to every live coroutine
// each time it runs any, so one per node made every workflow task of a large
// run cost a switch per node in flight. Nodes a step finishes together reach
// done in step order, however their futures were set.
func TestBatchWalkKeepsACoroutinePerStep(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger)
	env := s.NewTestWorkflowEnvironment()
	// Every coroutine is a goroutine: count them as the steps are in flight.
	base := runtime.NumGoroutine()
	var coroutines int
	env.RegisterDelayedCallback(func() { coroutines = runtime.NumGoroutine() - base }, 30*time.Second)
	var order []int
	runWalk(t, env, func(ctx workflow.Context) batchWalk {
		return batchWalk{
			deps: make([][]int32, 1000), limit: 10, maxBatch: 100,
			work:  func(int) bool { return true },
			class: func(int) string { return "k" },
			start: func(nodes []int) []workflow.Future {
				futures, sets := make([]workflow.Future, len(nodes)), make([]workflow.Settable, len(nodes))
				for k := range nodes {
					futures[k], sets[k] = workflow.NewFuture(ctx)
				}
				workflow.Go(ctx, func(ctx workflow.Context) {
					_ = workflow.Sleep(ctx, time.Minute)
					for k := len(nodes) - 1; k >= 0; k-- {
						sets[k].Set(nil, nil)
					}
				})
				return futures
			},
			done: func(i int, _ workflow.Future) error {
				order = append(order, i)
				return nil
			},
		}
	})
	if coroutines < 10 || coroutines > 100 {
		t.Errorf("the workflow held %d more goroutines with ten steps of 100 nodes in flight, want a few per step", coroutines)
	}
	for i, n := range order {
		if n != i {
			t.Fatalf("done in the order %v..., want node order", order[:min(len(order), i+5)])
		}
	}
	if len(order) != 1000 {
		t.Errorf("%d nodes done, want 1000", len(order))
	}
}

// TestTakeSpreadsAClassOverFreeSlots: take gives the same steps as taking
// every ready node of the class in order, up to its share of the free slots,
// and keeping the others' order, for ready lists of mixed classes and nodes
// without work; the step is a slice of its own.
func TestTakeSpreadsAClassOverFreeSlots(t *testing.T) {
	model := func(w batchWalk, ready []int, free int) (nodes, rest []int) {
		c := w.class(ready[0])
		if c == "" || w.maxBatch <= 1 {
			return ready[:1], ready[1:]
		}
		same := 0
		for _, i := range ready {
			if w.class(i) == c && w.work(i) {
				same++
			}
		}
		size := min(w.maxBatch, (same+free-1)/free)
		for _, i := range ready {
			if len(nodes) < size && w.class(i) == c && w.work(i) {
				nodes = append(nodes, i)
			} else {
				rest = append(rest, i)
			}
		}
		return nodes, rest
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		n := 1 + rng.IntN(400)
		classes, idle := make([]string, n), make([]bool, n)
		for i := range n {
			classes[i] = []string{"apply", "delete", ""}[rng.IntN(3)]
			idle[i] = rng.IntN(5) == 0
		}
		w := batchWalk{maxBatch: 1 + rng.IntN(100),
			class: func(i int) string { return classes[i] },
			work:  func(i int) bool { return !idle[i] }}
		ready := rng.Perm(n)
		for idle[ready[0]] { // the walk finishes a node without work before take
			ready = ready[1:]
			if len(ready) == 0 {
				break
			}
		}
		if len(ready) == 0 {
			continue
		}
		free := 1 + rng.IntN(10)
		wantNodes, wantRest := model(w, slices.Clone(ready), free)
		nodes, rest := w.take(ready, free, w.maxBatch)
		if !slices.Equal(nodes, wantNodes) || !slices.Equal(rest, wantRest) {
			t.Fatalf("trial %d (maxBatch %d, free %d): take gave %v and %v, want %v and %v", trial, w.maxBatch, free, nodes, rest, wantNodes, wantRest)
		}
		// The walk goes on appending to rest while the step holds nodes.
		for k := range rest {
			rest[k] = -1
		}
		_ = append(rest, slices.Repeat([]int{-1}, n)...)
		if !slices.Equal(nodes, wantNodes) {
			t.Fatalf("trial %d: the step %v shares its array with the rest", trial, nodes)
		}
	}
}

// runWalk runs the walk that walk makes in env's workflow, and fails t when
// the workflow fails or the walk leaves nodes not started.
func runWalk(t *testing.T, env *testsuite.TestWorkflowEnvironment, walk func(ctx workflow.Context) batchWalk) {
	t.Helper()
	env.ExecuteWorkflow(func(ctx workflow.Context) error {
		if notStarted := walk(ctx).run(ctx); len(notStarted) > 0 {
			return fmt.Errorf("not started: %v", notStarted)
		}
		return nil
	})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
}

// TestBatchWalkPools: where pooled says so and more than one slot is free,
// the ready nodes of a class go as one step that holds every free slot and
// is told to run that many at once (up to maxPool nodes: the rest is the
// next step); with one slot free, or a class not pooled, the walk takes
// batches as before. A node that depends on one of a pool's starts once the
// whole pool is done.
func TestBatchWalkPools(t *testing.T) {
	// 0 (alone) -> 1..200 (k); 1 -> 201 (j).
	deps := make([][]int32, 202)
	for i := 1; i <= 200; i++ {
		deps[i] = []int32{0}
	}
	deps[201] = []int32{1}
	class := func(i int) string {
		switch i {
		case 0:
			return ""
		case 201:
			return "j"
		}
		return "k"
	}
	for _, c := range []struct {
		name    string
		limit   int
		maxPool int
		pooled  func(i int) bool
		want    string
	}{
		{"pooled", 10, 500, func(i int) bool { return class(i) == "k" },
			"[0] k[1-200]x10 j[201]x1"},
		{"pool of at most maxPool", 10, 150, func(i int) bool { return class(i) == "k" },
			"[0] k[1-150]x10 k[151-200]x10 j[201]x1"},
		{"one slot", 1, 500, func(i int) bool { return true },
			"[0] k[1-100]x1 k[101-200]x1 j[201]x1"},
		{"not pooled", 10, 500, func(int) bool { return false },
			"[0] k[1-20]x1 k[21-40]x1 k[41-60]x1 k[61-80]x1 k[81-100]x1 k[101-120]x1 k[121-140]x1 k[141-160]x1 k[161-180]x1 k[181-200]x1 j[201]x1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			s.SetLogger(quietLogger)
			env := s.NewTestWorkflowEnvironment()
			var steps []string
			step := func(ctx workflow.Context, nodes []int, parallel int) []workflow.Future {
				switch {
				case len(nodes) == 1 && class(nodes[0]) == "":
					steps = append(steps, fmt.Sprintf("[%d]", nodes[0]))
				case len(nodes) == 1:
					steps = append(steps, fmt.Sprintf("%s[%d]x%d", class(nodes[0]), nodes[0], parallel))
				default:
					steps = append(steps, fmt.Sprintf("%s[%d-%d]x%d", class(nodes[0]), nodes[0], nodes[len(nodes)-1], parallel))
				}
				futures := make([]workflow.Future, len(nodes))
				for k := range nodes {
					f, set := workflow.NewFuture(ctx)
					set.Set(nil, nil)
					futures[k] = f
				}
				return futures
			}
			runWalk(t, env, func(ctx workflow.Context) batchWalk {
				return batchWalk{
					deps: deps, limit: c.limit, maxBatch: maxBatch, maxPool: c.maxPool,
					work:      func(int) bool { return true },
					class:     class,
					pooled:    c.pooled,
					start:     func(nodes []int) []workflow.Future { return step(ctx, nodes, 1) },
					startPool: func(nodes []int, parallel int) []workflow.Future { return step(ctx, nodes, parallel) },
					done:      func(int, workflow.Future) error { return nil },
				}
			})
			if got := strings.Join(steps, " "); got != c.want {
				t.Errorf("steps %s\n want %s", got, c.want)
			}
		})
	}
}

// TestBatchWalkFreeWaits: with freeWaits a step that applied its node gives
// its slot back while the node waits for its health, so more nodes than
// limit wait at once (here every node's health needs every node started);
// up to waitsPerSlot*limit of them: past that, a step keeps its slot until
// its node is done. Without freeWaits the waits hold the slots.
func TestBatchWalkFreeWaits(t *testing.T) {
	for _, c := range []struct {
		name      string
		free      bool
		limit, n  int
		wantStart int
	}{
		{"free", true, 2, 5, 5},
		{"held", false, 2, 5, 2},
		{"bounded", true, 1, waitsPerSlot + 1, waitsPerSlot + 1}, // ten waiting, one holding the slot
		{"past the bound", true, 1, waitsPerSlot + 2, waitsPerSlot + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			s.SetLogger(quietLogger)
			env := s.NewTestWorkflowEnvironment()
			started, healthy := 0, 0
			env.ExecuteWorkflow(func(ctx workflow.Context) error {
				ch := workflow.NewBufferedChannel(ctx, c.n)
				w := batchWalk{
					deps: make([][]int32, c.n), limit: c.limit, maxBatch: 1, applied: ch, freeWaits: c.free,
					work:  func(int) bool { return true },
					class: func(int) string { return "" },
					start: func(nodes []int) []workflow.Future {
						started++
						f, set := workflow.NewFuture(ctx)
						workflow.Go(ctx, func(ctx workflow.Context) {
							ch.Send(ctx, nodes[0]) // applied; healthy once every node started
							if ok, _ := workflow.AwaitWithTimeout(ctx, time.Hour, func() bool { return started == c.n }); !ok {
								set.Set(nil, errors.New("never healthy"))
								return
							}
							healthy++
							set.Set(nil, nil)
						})
						return []workflow.Future{f}
					},
					done: func(i int, f workflow.Future) error { return f.Get(ctx, nil) },
				}
				w.run(ctx)
				return nil
			})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if c.wantStart == c.n {
				if started != c.n || healthy != c.n {
					t.Errorf("started %d, healthy %d: want all %d, waiting together", started, healthy, c.n)
				}
			} else if started != c.wantStart || healthy != 0 {
				t.Errorf("started %d (healthy %d), want %d started before a wait ended", started, healthy, c.wantStart)
			}
		})
	}
}
