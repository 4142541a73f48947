package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// overlap counts how many calls are in at once. Every call waits until bound
// calls are in together, so a walk that keeps its bound reaches it whatever the
// goroutine scheduling; then it stays in for hold, so that a call over the bound,
// started alongside the others, is in at the same time and counted.
type overlap struct {
	bound         int
	mu            sync.Mutex
	running, peak int
	full          chan struct{}
	opened        bool
}

const (
	// overlapHold is how long a call stays in after bound calls were in at once.
	overlapHold = 50 * time.Millisecond
	// overlapGiveUp ends the wait of a walk that never reaches its bound, so the
	// test reports a low peak instead of hanging; it is under the test
	// environment's idle timeout (3 s).
	overlapGiveUp = time.Second
)

func newOverlap(bound int) *overlap {
	return &overlap{bound: bound, full: make(chan struct{})}
}

func (o *overlap) call() {
	o.mu.Lock()
	o.running++
	o.peak = max(o.peak, o.running)
	if o.running >= o.bound && !o.opened {
		o.opened = true
		close(o.full)
	}
	o.mu.Unlock()
	select {
	case <-o.full:
	case <-time.After(overlapGiveUp):
	}
	time.Sleep(overlapHold)
	o.mu.Lock()
	o.running--
	o.mu.Unlock()
}

func (o *overlap) peakSeen() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.peak
}

// TestWalkRunsExactlyTheBoundAtOnce: with 20 nodes and a bound of 3, exactly 3
// run at once (not fewer: the bound is used; not more: it holds), and after a
// node fails its dependents never start.
func TestWalkRunsExactlyTheBoundAtOnce(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger)
	env := s.NewTestWorkflowEnvironment()
	const limit = 3
	o := newOverlap(limit)
	var mu sync.Mutex
	var ran []int
	env.RegisterActivityWithOptions(func(ctx context.Context, i int) error {
		mu.Lock()
		ran = append(ran, i)
		mu.Unlock()
		o.call()
		if i == 5 {
			return errors.New("boom")
		}
		return nil
	}, activity.RegisterOptions{Name: "node"})
	deps := make([][]int32, 20) // 0..9 independent, 10..19 each after 5
	for i := 10; i < 20; i++ {
		deps[i] = []int32{5}
	}
	var notStarted []int
	env.ExecuteWorkflow(func(ctx workflow.Context) error {
		notStarted = walk(ctx, deps, limit, nil, func(i int) workflow.Future {
			return workflow.ExecuteActivity(step(ctx, "node"), "node", i)
		}, func(i int, f workflow.Future) error { return f.Get(ctx, nil) })
		return nil
	})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if peak := o.peakSeen(); peak != limit {
		t.Errorf("peak parallelism %d, want exactly the bound %d", peak, limit)
	}
	for i := 10; i < 20; i++ {
		if !slices.Contains(notStarted, i) {
			t.Errorf("node %d started after the node it depends on failed (not started: %v)", i, notStarted)
		}
	}
	// What walk reports as not started is exactly what never ran.
	for i := range deps {
		if slices.Contains(ran, i) == slices.Contains(notStarted, i) {
			t.Errorf("node %d: ran %v, reported not started %v", i, ran, notStarted)
		}
	}
}

// TestApplyRunsExactlyParallelismAtOnce: an Apply of independent resources
// applies as many at once as its Parallelism says, or defaultParallel when unset.
func TestApplyRunsExactlyParallelismAtOnce(t *testing.T) {
	for _, tc := range []struct{ parallelism, nodes, want int }{
		{parallelism: 3, nodes: 8, want: 3},
		{parallelism: 0, nodes: defaultParallel + 3, want: defaultParallel},
	} {
		t.Run(fmt.Sprintf("parallelism=%d", tc.parallelism), func(t *testing.T) {
			h := newHarness(t)
			o := newOverlap(tc.want)
			h.rt.onApply = func(string) { o.call() }
			spec := &engine.Spec{}
			for i := range tc.nodes {
				spec.Resources = append(spec.Resources, cm(fmt.Sprintf("n%d", i)))
			}
			_, err := h.runWith(Apply, spec, func(_ *testsuite.TestWorkflowEnvironment, in *runspec.RunInput) {
				in.Parallelism = tc.parallelism
			})
			if err != nil {
				t.Fatal(err)
			}
			if peak := o.peakSeen(); peak != tc.want {
				t.Errorf("peak parallelism %d, want exactly %d", peak, tc.want)
			}
			if len(h.rt.applied) != tc.nodes {
				t.Errorf("applied %d resources, want %d", len(h.rt.applied), tc.nodes)
			}
		})
	}
}

// TestBatchedResourcesHaveTheirOwnTimes: resources applied in one batch
// show, in the run's progress, their own start and end, one after another,
// each as long as its own step.
func TestBatchedResourcesHaveTheirOwnTimes(t *testing.T) {
	h := newHarness(t)
	h.rt.onApply = func(string) { time.Sleep(20 * time.Millisecond) }
	spec := &engine.Spec{}
	for i := range 6 {
		spec.Resources = append(spec.Resources, cm(fmt.Sprintf("n%d", i)))
	}
	var env *testsuite.TestWorkflowEnvironment
	_, err := h.runWith(Apply, spec, func(e *testsuite.TestWorkflowEnvironment, in *runspec.RunInput) {
		env, in.Parallelism = e, 2 // two batches of three
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := env.QueryWorkflow(runspec.ProgressQuery)
	if err != nil {
		t.Fatal(err)
	}
	var p runspec.Progress
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	for k, n := range p.Nodes {
		if n.Finished.Sub(n.Started) < 20*time.Millisecond {
			t.Errorf("%s: %s to %s, shorter than its own step", n.ID, n.Started, n.Finished)
		}
		if k%3 > 0 && n.Started.Before(p.Nodes[k-1].Finished) {
			t.Errorf("%s started at %s, before %s of the same batch finished at %s", n.ID, n.Started, p.Nodes[k-1].ID, p.Nodes[k-1].Finished)
		}
	}
}
