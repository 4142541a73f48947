package activities

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// waiter is the memory runtime that can wait: each resource's wait ends at
// once with the error outcome[id] names (Healthy without one), and the Since
// each wait was given is kept.
type waiter struct {
	memRuntimes
	outcome map[string]error
	mu      sync.Mutex
	since   map[string]time.Time
}

func (w *waiter) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) { return w, nil }

func (w *waiter) WaitHealthy(_ context.Context, r *engine.Resource, opts runtime.WaitOptions) (health.Result, error) {
	w.mu.Lock()
	w.since[r.ID] = opts.Since
	w.mu.Unlock()
	opts.Progress(health.Result{Status: health.Progressing})
	return health.Result{Status: health.Healthy}, w.outcome[r.ID]
}

// TestWaitResourcesKeepsItsDeadlineAndFailsEachAlone: a retried wait of
// several keeps the first attempt's start (its heartbeat's Since), a
// resource that turns Degraded fails alone, in its place of the result, and
// a failure that is not a resource's own fails the step, retryable.
func TestWaitResourcesKeepsItsDeadlineAndFailsEachAlone(t *testing.T) {
	_, b, rt := withMemory(t)
	ids, node := batchRelease(t, b, rt)
	degraded := runtime.Permanent(&runtime.HealthError{ID: ids[1], Health: health.Result{Status: health.Degraded, Message: "CrashLoopBackOff"}})
	w := &waiter{memRuntimes: rt, outcome: map[string]error{ids[1]: degraded}, since: map[string]time.Time{}}
	a := New(b, w, nil)
	in := BatchInput{Node: node, IDs: ids[:3]}

	first := time.Now().Add(-time.Minute).Truncate(time.Second)
	var res WaitBatchResult
	if err := runActivity(a, a.WaitResources, in, WaitBatchProgress{Since: first}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Waits) != 3 || len(res.Errors) != 3 || res.Errors[0] != "" || res.Errors[2] != "" || res.Errors[1] != degraded.Error() {
		t.Fatalf("result %+v, want b's failure in its place alone", res)
	}
	if res.Waits[0].Health.Status != health.Healthy || len(res.Waits[0].Transitions) != 1 {
		t.Errorf("a's wait %+v, want Healthy after one Progressing", res.Waits[0])
	}
	for _, id := range in.IDs {
		if !w.since[id].Equal(first) {
			t.Errorf("%s waited since %v, want the first attempt's %v", id, w.since[id], first)
		}
	}

	w.outcome[ids[2]] = errors.New("connection refused")
	err := runActivity(a, a.WaitResources, in, nil, nil)
	var app *temporal.ApplicationError
	if err == nil || (errors.As(err, &app) && app.NonRetryable()) {
		t.Fatalf("wait with the cluster unreachable: %v, want a retryable failure", err)
	}
}
