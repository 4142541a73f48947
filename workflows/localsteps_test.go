package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestChainStepsAreLocal: a chain's nodes come one at a time, so none shares
// a batch, and a chain shorter than minLocalChain runs a step per node
// (chainMin); without a workspace queue each Kubernetes apply and delete is a
// local activity (a marker in history, summarised by the resource it
// changes), not an activity of its own, while the Namespace's delete (it
// waits for the namespace to empty) stays an ordinary activity. Every
// resource's outcome is still recorded. (TestRuntimeStepsRunOnTheWorkspaceQueue
// shows a run with a workspace queue keeps them ordinary, on that queue.)
func TestChainStepsAreLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := newHarness(t)
	tc := startWorker(t, h.acts)

	ns := nsResource()
	spec := &engine.Spec{Resources: []engine.Resource{ns, cm("a", ns.ID), cm("b", "v1:ConfigMap:ns:a"), cm("c", "v1:ConfigMap:ns:b")}}
	hash, err := h.backend.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []struct {
		workflow string
		spec     string
		local    []string // the local steps' summaries, in order
		steps    []string // the ordinary activities that changed a resource
	}{
		{runspec.ApplyWorkflow, hash,
			[]string{"apply v1:Namespace:ns", "apply v1:ConfigMap:ns:a", "apply v1:ConfigMap:ns:b", "apply v1:ConfigMap:ns:c"}, nil},
		{runspec.DestroyWorkflow, "",
			[]string{"delete v1:ConfigMap:ns:c", "delete v1:ConfigMap:ns:b", "delete v1:ConfigMap:ns:a"},
			[]string{activities.DeleteResourceActivity}},
	} {
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, run.workflow,
			runspec.RunInput{Project: "p", Workspace: "w", SpecHash: run.spec, AutoApprove: true, Parallelism: 10})
		if err != nil {
			t.Fatal(err)
		}
		if err := wr.Get(ctx, nil); err != nil {
			t.Fatalf("%s: %v", run.workflow, err)
		}
		events := history(ctx, t, tc, wr)
		if got, want := strings.Join(localSteps(t, events), ","), strings.Join(run.local, ","); got != want {
			t.Errorf("%s: local steps %s, want %s", run.workflow, got, want)
		}
		if steps := resourceSteps(events); !slices.Equal(steps, run.steps) {
			t.Errorf("%s: resource activities %v, want %v", run.workflow, steps, run.steps)
		}
	}
	if got := strings.Join(h.rt.applied, ","); got != "v1:Namespace:ns,v1:ConfigMap:ns:a,v1:ConfigMap:ns:b,v1:ConfigMap:ns:c" {
		t.Errorf("applied %s", got)
	}
	for _, rev := range []int{1, 2} {
		rel, err := h.backend.GetRelease(ctx, "p", "w", rev)
		if err != nil {
			t.Fatal(err)
		}
		if rel.Phase != engine.PhaseSucceeded {
			t.Errorf("release %d: %s %s", rev, rel.Phase, rel.Error)
		}
		if n := len(rel.State.Resources); rev == 1 && n != 4 || rev == 2 && n != 0 {
			t.Errorf("release %d records %d resources", rev, n)
		}
	}
}

// resourceSteps are the ordinary activities that changed resources, in the
// order they were scheduled.
func resourceSteps(events []*historypb.HistoryEvent) []string {
	var steps []string
	for _, a := range startedActivities(events) {
		switch a {
		case activities.ApplyResourceActivity, activities.DeleteResourceActivity, activities.ApplyResourcesActivity, activities.DeleteResourcesActivity:
			steps = append(steps, a)
		}
	}
	return steps
}

// localSteps are the summaries of the local activities that changed a
// resource (not previews, not release steps), in the order history recorded
// them.
func localSteps(t *testing.T, events []*historypb.HistoryEvent) []string {
	t.Helper()
	var steps []string
	for _, summary := range localSummaries(t, events) {
		if strings.HasPrefix(summary, "apply ") || strings.HasPrefix(summary, "delete ") {
			steps = append(steps, summary)
		}
	}
	return steps
}

// TestStoppingWorkerHandsLocalStepsOver: a worker told to stop while it runs
// a chain's local step finishes that step, then refuses the next one, which
// runs as an ordinary activity; the worker still serving the queue takes the
// workflow task after it and runs the rest of the chain, locally again.
// Without the refusal the stopping worker would go on driving the chain for
// as long as its grace lasts. (A chain of minLocalChain nodes or more runs as
// chain steps, ordinary activities: a stopping worker finishes the one it
// holds and takes no other, TestWorkerSIGTERMMidApply in cmd/kumo.)
func TestStoppingWorkerHandsLocalStepsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newHarness(t)
	reached, release := make(chan struct{}), make(chan struct{})
	h.rt.onApply = func(id string) {
		if id == "v1:ConfigMap:ns:b" {
			close(reached)
			<-release
		}
	}
	tc := startServer(t)
	stopping := startWorkerOn(t, tc, h.acts, worker.Options{Identity: "stopping", WorkerStopTimeout: time.Minute})

	ns := nsResource()
	spec := &engine.Spec{Resources: []engine.Resource{ns, cm("a", ns.ID), cm("b", "v1:ConfigMap:ns:a"), cm("c", "v1:ConfigMap:ns:b"), cm("d", "v1:ConfigMap:ns:c")}}
	wr := startApply(ctx, t, h, tc, spec, runspec.RunInput{Parallelism: 10})
	select {
	case <-reached:
	case <-ctx.Done():
		t.Fatal("the chain never reached b")
	}
	startWorkerOn(t, tc, h.acts, worker.Options{Identity: "serving"})
	stopped := make(chan struct{})
	go func() { stopping.Stop(); close(stopped) }()
	// Stop closes the worker's stop channel at once, then waits for what the
	// worker runs: b's step, held here until the worker is surely stopping.
	time.Sleep(200 * time.Millisecond)
	close(release)
	if err := wr.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	<-stopped

	events := history(ctx, t, tc, wr)
	if got, want := strings.Join(localSteps(t, events), ","),
		"apply v1:Namespace:ns,apply v1:ConfigMap:ns:a,apply v1:ConfigMap:ns:b,apply v1:ConfigMap:ns:c,apply v1:ConfigMap:ns:d"; got != want {
		t.Errorf("local steps %s, want %s (c's refused)", got, want)
	}
	if steps := resourceSteps(events); !slices.Equal(steps, []string{activities.ApplyResourceActivity}) {
		t.Errorf("resource activities %v, want c's apply alone", steps)
	}
	var last string
	for _, e := range events {
		if a := e.GetWorkflowTaskCompletedEventAttributes(); a != nil {
			last = a.GetIdentity()
		}
	}
	// The frontend puts the authenticated subject first; the worker's own
	// identity follows.
	if !strings.HasSuffix(last, " (serving)") {
		t.Errorf("the last workflow task was completed by %q, want the serving worker", last)
	}
	if got := strings.Join(h.rt.applied, ","); got != "v1:Namespace:ns,v1:ConfigMap:ns:a,v1:ConfigMap:ns:b,v1:ConfigMap:ns:c,v1:ConfigMap:ns:d" {
		t.Errorf("applied %s", got)
	}
	rel, err := h.backend.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Phase != engine.PhaseSucceeded || len(rel.State.Resources) != 5 {
		t.Errorf("release %s with %d resources: %s", rel.Phase, len(rel.State.Resources), rel.Error)
	}
}

// TestLongChainOfLocalStepsYieldsOncePerBudget: a chain of local steps that
// runs for a few seconds gives its workflow task back about once per
// localStepBudget of steps, however late the yield's timer fires (here a
// whole budget late, as a busy embedded server was seen to fire it). Counted
// from when the timer started rather than when it fired, the budget was
// spent by the time the task came back, every later step yielded again, and
// the chain ran at a step a second: this one would not finish within the
// test's minute.
func TestLongChainOfLocalStepsYieldsOncePerBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := newHarness(t)
	h.rt.onApply = func(string) { time.Sleep(10 * time.Millisecond) }
	defer func(d time.Duration) { yieldTimer = d }(yieldTimer)
	yieldTimer = localStepBudget
	tc := startWorker(t, h.acts)
	const n = 300 // 3 s of steps at least
	// Widgets: a chain of ConfigMaps this long is chain steps
	// (chainFromStart), a chain of kinds that may wait for health a local
	// step per node.
	spec := &engine.Spec{Resources: []engine.Resource{widget("c000")}}
	for i := 1; i < n; i++ {
		spec.Resources = append(spec.Resources, widget(fmt.Sprintf("c%03d", i), spec.Resources[i-1].ID))
	}
	wr := startApply(ctx, t, h, tc, spec, runspec.RunInput{Parallelism: 10})
	if err := wr.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	events := history(ctx, t, tc, wr)
	yields := countEvents(events, enumspb.EVENT_TYPE_TIMER_STARTED)
	if local := len(localSteps(t, events)); local != n || yields == 0 || yields > n/20 {
		t.Errorf("%d local steps and %d yields, want %d steps and a yield per second or so of them", local, yields, n)
	}
	t.Logf("%d local steps, %d yields, %d history events", n, yields, len(events))
}
