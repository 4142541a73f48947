package workflows

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/engine"
)

// TestApplyCancelledWhileApplying: a run cancelled while two nodes are applying
// lets those two finish and records them, starts none of their dependents, and
// finishes its release as failed.
//
// It runs on a Temporal server: the test environment settles a cancelled
// activity at once instead of waiting for it (WaitForCancellation), and starts
// activities scheduled on a cancelled context, so it cannot show either.
func TestApplyCancelledWhileApplying(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := newHarness(t)

	// a and b apply first, at once, and wait to be let go; c and d come after them.
	inFlight := make(chan string, 4)
	letGo := make(chan struct{})
	h.rt.onApply = func(id string) {
		inFlight <- id
		<-letGo
	}
	tc := startWorker(t, h.acts)
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(letGo) }) }) // before the worker stops

	spec := &engine.Spec{Resources: []engine.Resource{
		cm("a"), cm("b"), cm("c", "v1:ConfigMap:ns:a"), cm("d", "v1:ConfigMap:ns:b"),
	}}
	hash, err := h.backend.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: MutatingWorkflowID("p", "w"), TaskQueue: TaskQueue}, ApplyWorkflow,
		RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	var started []string
	for len(started) < 2 {
		select {
		case id := <-inFlight:
			started = append(started, id)
		case <-ctx.Done():
			t.Fatalf("applies in flight: %v, want a and b", started)
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
	if got := strings.Join(started, ","); got != "v1:ConfigMap:ns:a,v1:ConfigMap:ns:b" {
		t.Errorf("in flight when cancelled: %s, want a and b", got)
	}
	applied := slices.Sorted(slices.Values(h.rt.applied))
	if got := strings.Join(applied, ","); got != "v1:ConfigMap:ns:a,v1:ConfigMap:ns:b" {
		t.Errorf("applied %s, want just a and b, the nodes in flight", got)
	}
	// After the cancellation no new step starts.
	if got := strings.Join(startedActivities(history(ctx, t, tc, wr)), ","); got != "CreateRelease,PlanGraph,SetReleasePhase,ApplyResource,ApplyResource,FinishRelease" {
		t.Errorf("activities started: %s, want no apply after the cancellation", got)
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
	if got := strings.Join(recorded, ","); got != "v1:ConfigMap:ns:a,v1:ConfigMap:ns:b" {
		t.Errorf("release state %s, want a and b: the in-flight nodes' results are recorded", got)
	}
}

// history is the run's history so far.
func history(ctx context.Context, t *testing.T, tc client.Client, wr client.WorkflowRun) []*historypb.HistoryEvent {
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
