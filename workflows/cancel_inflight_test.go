package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestApplyCancelledWhileApplying: a run cancelled while two nodes are applying
// lets those two finish and records them, starts none of their dependents, and
// finishes its release as failed.
//
// It runs on a Temporal server: the test environment settles a cancelled
// activity at once instead of waiting for it (WaitForCancellation), and starts
// activities scheduled on a cancelled context, so it cannot show either.
func TestApplyCancelledWhileApplying(t *testing.T) {
	spec := &engine.Spec{Resources: []engine.Resource{
		cm("a"), cm("b"), cm("c", "v1:ConfigMap:ns:a"), cm("d", "v1:ConfigMap:ns:b"),
	}}
	// a and b apply first, at once, each a step of its own (a local activity:
	// the run has no workspace queue); c and d come after them. The run takes
	// the cancel in when the SDK completes the workflow task the local steps
	// keep open (every ~8 s).
	cancelWhileApplying(t, spec, singleSteps)
}

// TestApplyCancelledWhileApplyingBatches: a cancel reaches ordinary batches
// in flight (a plan over localBatchMax), which stop after the resource each
// is applying: six independent resources, parallelism 2, are two batches of
// three (a, a2, a3 and b, b2, b3); the first resource of each is in flight
// when the run is cancelled, and nothing after it is applied.
func TestApplyCancelledWhileApplyingBatches(t *testing.T) {
	withLocalBatchMax(t, 0)
	spec := &engine.Spec{Resources: []engine.Resource{cm("a"), cm("a2"), cm("a3"), cm("b"), cm("b2"), cm("b3")}}
	cancelWhileApplying(t, spec, ordinaryBatches)
}

// TestApplyCancelledWhileLocalBatchesApply: the batches of a small plan are
// local steps, which a cancel does not cut short: held past localStepBudget,
// the pool in flight (a, a2, a3, b, b2, b3, two at once: a and a2 first)
// finishes and is recorded, the walk then gives its task back, takes the
// cancel in and starts nothing more (c and d, after a and b, never apply).
func TestApplyCancelledWhileLocalBatchesApply(t *testing.T) {
	spec := &engine.Spec{Resources: []engine.Resource{cm("a"), cm("a2"), cm("a3"), cm("b"), cm("b2"), cm("b3"),
		cm("c", "v1:ConfigMap:ns:a"), cm("d", "v1:ConfigMap:ns:b")}}
	cancelWhileApplying(t, spec, localBatches)
}

// withLocalBatchMax sets localBatchMax to n for the test.
func withLocalBatchMax(t testing.TB, n int) {
	was := localBatchMax
	t.Cleanup(func() { localBatchMax = was })
	localBatchMax = n
}

// How cancelWhileApplying's run applies its resources.
type applySteps int

const (
	singleSteps     applySteps = iota // a local step each
	ordinaryBatches                   // ApplyResources activities
	localBatches                      // ApplyResources local steps
)

// cancelWhileApplying applies spec with parallelism 2, holds the applies of
// a and b (the first of their two steps), cancels the run and lets them go
// (ordinary batches: once they heard of the cancel; local ones: once the walk
// has kept its task for localStepBudget): the steps of a and b are applied
// and recorded (a batch's: a alone, or all of a local one), nothing else
// is, and no step starts after the cancel.
func cancelWhileApplying(t *testing.T, spec *engine.Spec, mode applySteps) {
	steps := "" // the phase after local previews keeps them, a local step (phaseSteps)
	want := "v1:ConfigMap:ns:a,v1:ConfigMap:ns:b"
	first := want // the two applies held
	switch mode {
	case ordinaryBatches:
		steps += "ApplyResources,ApplyResources,"
	case localBatches:
		want = "v1:ConfigMap:ns:a,v1:ConfigMap:ns:a2,v1:ConfigMap:ns:a3,v1:ConfigMap:ns:b,v1:ConfigMap:ns:b2,v1:ConfigMap:ns:b3"
		first = "v1:ConfigMap:ns:a,v1:ConfigMap:ns:a2"
	}
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := newHarness(t)

	inFlight := make(chan string, len(spec.Resources))
	letGo := make(chan struct{})
	h.rt.onApply = func(id string) {
		inFlight <- id
		<-letGo
	}
	stepsStopped := &contextsEnded{activity: activities.ApplyResourcesActivity, ended: make(chan struct{}, len(spec.Resources))}
	tc := startServer(t)
	startWorkerOn(t, tc, h.acts, worker.Options{Interceptors: []interceptor.WorkerInterceptor{stepsStopped}})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(letGo) }) }) // before the worker stops

	hash, err := h.backend.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow,
		runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	var started []string
	for len(started) < 2 {
		select {
		case id := <-inFlight:
			started = append(started, id)
		case <-ctx.Done():
			t.Fatalf("applies in flight: %v, want %s", started, first)
		}
	}
	if err := tc.CancelWorkflow(ctx, wr.GetID(), wr.GetRunID()); err != nil {
		t.Fatal(err)
	}
	// The run took the cancellation in while a and b were applying; they run
	// on a context the cancel does not reach, so they finish and are recorded.
	for countEvents(history(ctx, t, tc, wr), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED) < 1 {
		select {
		case <-ctx.Done():
			t.Fatal("the cancel request never reached the run")
		case <-time.After(20 * time.Millisecond):
		}
	}
	switch mode {
	case localBatches:
		// Past the walk's budget: the batches' end gives the task back.
		time.Sleep(localStepBudget + 200*time.Millisecond)
	case ordinaryBatches:
		// Each batch in flight heard of the cancel (a heartbeat's answer
		// ended its context) before its resource in flight is let go.
		for range 2 {
			select {
			case <-stepsStopped.ended:
			case <-ctx.Done():
				t.Fatal("the batches in flight never heard of the cancel")
			}
		}
	}
	once.Do(func() { close(letGo) })

	err = wr.Get(ctx, nil)
	if err == nil {
		t.Fatal("a cancelled run succeeded")
	}
	var cancelled *temporal.CanceledError
	if !errors.As(err, &cancelled) {
		t.Errorf("run error %v, want cancelled", err)
	}
	slices.Sort(started)
	if got := strings.Join(started, ","); got != first {
		t.Errorf("in flight when cancelled: %s, want %s", got, first)
	}
	applied := slices.Sorted(slices.Values(h.rt.applied))
	if got := strings.Join(applied, ","); got != want {
		t.Errorf("applied %s, want just %s, the steps in flight", got, want)
	}
	// After the cancellation no new step starts but the release's finish (the
	// other release steps and the preview's batches are local: markers, not
	// activities; a cancelled run's finish is an ordinary step).
	if got := strings.Join(startedActivities(history(ctx, t, tc, wr)), ","); got != steps+"FinishRelease" {
		t.Errorf("activities started: %s, want no step after the cancellation", got)
	}
	local := slices.Sorted(slices.Values(localSteps(t, history(ctx, t, tc, wr))))
	switch {
	case mode == singleSteps && !slices.Equal(local, []string{"apply v1:ConfigMap:ns:a", "apply v1:ConfigMap:ns:b"}):
		t.Errorf("local steps %v, want a's and b's applies", local)
	case mode == localBatches && !slices.Equal(local, []string{"apply 6 resources: v1:ConfigMap:ns:a … v1:ConfigMap:ns:b3"}):
		t.Errorf("local steps %v, want the pool's", local)
	}

	rel, err := h.backend.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Phase != engine.PhaseFailed || !strings.Contains(rel.Error, "cancel") {
		t.Errorf("release %s %q: want failed, cancelled", rel.Phase, rel.Error)
	}
	var recorded []string
	if rel.State != nil {
		for _, r := range rel.State.Resources {
			recorded = append(recorded, r.ID)
		}
	}
	slices.Sort(recorded)
	if got := strings.Join(recorded, ","); got != want {
		t.Errorf("release state %s, want %s: the in-flight steps' results are recorded", got, want)
	}
}

// contextsEnded is a worker interceptor that sends on ended each time the
// context of a running activity of type activity ends. A batch stops after
// its resource in flight only once its context has ended: the worker ends it
// when the answer to a heartbeat says the run was cancelled, a moment after
// the server recorded that heartbeat, so the server's view cannot tell when
// the batch heard of the cancel.
type contextsEnded struct {
	interceptor.WorkerInterceptorBase
	activity string
	ended    chan struct{}
}

func (c *contextsEnded) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &contextEnded{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, c: c}
}

type contextEnded struct {
	interceptor.ActivityInboundInterceptorBase
	c *contextsEnded
}

func (a *contextEnded) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if activity.GetInfo(ctx).ActivityType.Name != a.c.activity {
		return a.Next.ExecuteActivity(ctx, in)
	}
	returned := make(chan struct{})
	defer close(returned)
	go func() {
		select {
		case <-ctx.Done():
			a.c.ended <- struct{}{}
		case <-returned:
		}
	}()
	return a.Next.ExecuteActivity(ctx, in)
}

// history is the run's history so far.
func history(ctx context.Context, t testing.TB, tc client.Client, wr client.WorkflowRun) []*historypb.HistoryEvent {
	t.Helper()
	var events []*historypb.HistoryEvent
	it := tc.GetWorkflowHistory(ctx, wr.GetID(), wr.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	return events
}

func countEvents(events []*historypb.HistoryEvent, typ enumspb.EventType) int {
	n := 0
	for _, e := range events {
		if e.GetEventType() == typ {
			n++
		}
	}
	return n
}

// startedActivities names the activities that started (ran on a worker), in the
// order they were scheduled.
func startedActivities(events []*historypb.HistoryEvent) []string {
	started := map[int64]bool{}
	for _, e := range events {
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil {
			started[a.GetScheduledEventId()] = true
		}
	}
	var names []string
	for _, e := range events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && started[e.GetEventId()] {
			names = append(names, a.GetActivityType().GetName())
		}
	}
	return names
}

// TestApplyCancelledWhileAChainApplies: a cancel stops a long chain before
// its end although no step is in flight long, whichever way the chain runs.
// A chain of widgets (kinds that may wait for health) is local steps that
// would keep one workflow task for as long as they run; the walk gives the
// task back every localStepBudget, so the run takes the cancel in, and no
// ordinary step starts. A chain of ConfigMaps is one chain step
// (chainFromStart), which hears of the cancel with a heartbeat's answer and
// stops after the resource in flight. Either way the applies stop after a
// prefix of the chain, and the release records exactly what was applied.
func TestApplyCancelledWhileAChainApplies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	for _, c := range []struct {
		kind  string
		node  func(name string, deps ...string) engine.Resource
		steps []string // the ordinary activities that changed resources
	}{
		{"widgets", widget, nil},
		{"ConfigMaps", cm, []string{activities.ApplyResourcesActivity}},
	} {
		t.Run(c.kind, func(t *testing.T) { cancelWhileAChainApplies(t, c.node, c.steps) })
	}
}

func cancelWhileAChainApplies(t *testing.T, node func(name string, deps ...string) engine.Resource, steps []string) {
	// 100 nodes of at least 30 ms each: 3 s of steps after the cancel, well
	// beyond localStepBudget and a heartbeat's throttle, and well within the
	// ~8 s after which the SDK would complete the task anyway.
	const n, held = 100, 3
	ids := make([]string, n)
	spec := &engine.Spec{}
	for i := range n {
		name := fmt.Sprintf("c%03d", i)
		var deps []string
		if i > 0 {
			deps = []string{ids[i-1]}
		}
		spec.Resources = append(spec.Resources, node(name, deps...))
		ids[i] = spec.Resources[i].ID
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := newHarness(t)
	reached, cancelled := make(chan struct{}), make(chan struct{})
	var sent sync.Once
	h.rt.onApply = func(id string) {
		if id == ids[held] {
			close(reached)
			<-cancelled
		}
		time.Sleep(30 * time.Millisecond)
	}
	tc := startWorker(t, h.acts)
	t.Cleanup(func() { sent.Do(func() { close(cancelled) }) })
	hash, err := h.backend.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow,
		runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true})
	if err != nil {
		t.Fatal(err)
	}
	select { // the held node is in flight
	case <-reached:
	case <-ctx.Done():
		t.Fatal("the chain never reached its held node")
	}
	if err := tc.CancelWorkflow(ctx, wr.GetID(), wr.GetRunID()); err != nil {
		t.Fatal(err)
	}
	asked := time.Now()
	sent.Do(func() { close(cancelled) })
	var canceledErr *temporal.CanceledError
	if err := wr.Get(ctx, nil); !errors.As(err, &canceledErr) {
		t.Fatalf("run error %v, want cancelled", err)
	}
	h.rt.mu.Lock()
	applied := slices.Clone(h.rt.applied)
	h.rt.mu.Unlock()
	t.Logf("%d of %d nodes applied; the run ended %s after the cancel", len(applied), n, time.Since(asked).Round(time.Millisecond))
	if len(applied) <= held || len(applied) == n || !slices.Equal(applied, ids[:len(applied)]) {
		t.Errorf("applied %d nodes, want a prefix of the chain past node %d and short of its end", len(applied), held)
	}
	if got := resourceSteps(history(ctx, t, tc, wr)); !slices.Equal(got, steps) {
		t.Errorf("activities %v changed resources, want %v", got, steps)
	}
	rel, err := h.backend.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	var recorded []string
	if rel.State != nil {
		for _, r := range rel.State.Resources {
			recorded = append(recorded, r.ID)
		}
	}
	slices.Sort(recorded)
	if rel.Phase != engine.PhaseFailed || !slices.Equal(recorded, applied) {
		t.Errorf("release %s records %d resources, want failed with the %d applied", rel.Phase, len(recorded), len(applied))
	}
}
