package workflows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// flatConfigMaps is n independent ConfigMaps c0…c(n-1), data set to
// version, and (withBad) a ConfigMap bad that depends on them all: when bad
// is rejected every other resource has been applied, and all of them are to
// be undone.
func flatConfigMaps(n int, version string, withBad bool) *engine.Spec {
	spec := &engine.Spec{}
	bad := cm("bad")
	for i := range n {
		r := cm(fmt.Sprintf("c%d", i))
		r.Attributes["data"] = map[string]any{"v": version}
		spec.Resources = append(spec.Resources, r)
		bad.DependsOn = append(bad.DependsOn, r.ID)
	}
	if withBad {
		spec.Resources = append(spec.Resources, bad)
	}
	return spec
}

// runResult is the result of wr, also when it failed (its error's details).
// queryProgress asks a run for its Progress.
func queryProgress(ctx context.Context, t *testing.T, tc client.Client, wr client.WorkflowRun) runspec.Progress {
	t.Helper()
	v, err := tc.QueryWorkflow(ctx, wr.GetID(), wr.GetRunID(), runspec.ProgressQuery)
	if err != nil {
		t.Fatal(err)
	}
	var p runspec.Progress
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

func runResult(ctx context.Context, wr client.WorkflowRun) (runspec.Result, error) {
	var res runspec.Result
	err := wr.Get(ctx, &res)
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		_ = app.Details(&res)
	}
	return res, err
}

// undoSteps counts the compensation activities of a run's history, and
// returns the ID of the first one's scheduled event (0: none).
func undoSteps(events []*historypb.HistoryEvent) (batches, singles int, first int64) {
	for _, e := range events {
		a := e.GetActivityTaskScheduledEventAttributes()
		if a == nil {
			continue
		}
		switch a.GetActivityType().GetName() {
		case activities.CompensateResourcesActivity:
			batches++
		case activities.CompensateResourceActivity:
			singles++
		default:
			continue
		}
		if first == 0 {
			first = e.GetEventId()
		}
	}
	return batches, singles, first
}

// TestCompensationUndoesInBatches: a failed apply of 60 flat ConfigMaps with
// RollbackOnFailure undoes all of them in a few CompensateResources steps,
// not one activity each: the creates are deleted, each node says it was
// compensated, and the release records none of them. Then, over a release of
// the 60, a failed update is undone the same way (the prior applied again),
// and the one undo that fails for good, in the middle of its batch, is
// reported while the others of its batch are still put back.
func TestCompensationUndoesInBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	const n = 60
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := newHarness(t)
	h.rt.reject["v1:ConfigMap:ns:bad"] = true
	tc := startWorker(t, h.acts)
	apply := func(spec *engine.Spec) (runspec.Result, runspec.Progress, []*historypb.HistoryEvent) {
		t.Helper()
		hash, err := h.backend.PutSpec(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow,
			runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true, Parallelism: 4, RollbackOnFailure: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := runResult(ctx, wr)
		if err != nil && !strings.Contains(err.Error(), "rejected") {
			t.Fatalf("apply: %v", err)
		}
		return res, queryProgress(ctx, t, tc, wr), history(ctx, t, tc, wr)
	}
	compensated := func(p runspec.Progress) int {
		k := 0
		for _, node := range p.Nodes {
			if node.Status == runspec.NodeCompensated {
				k++
			}
		}
		return k
	}

	// Creates, undone by deleting them.
	res, p, events := apply(flatConfigMaps(n, "1", true))
	batches, singles, _ := undoSteps(events)
	t.Logf("undo of %d creates: %d CompensateResources, %d CompensateResource, %d history events in all", n, batches, singles, len(events))
	if batches == 0 || (batches+singles)*5 > n {
		t.Errorf("%d resources undone in %d batches and %d single steps, want far fewer steps than resources", n, batches, singles)
	}
	if res.Compensation == nil || len(res.Compensation.Resources) != n || len(res.Compensation.Errors) != 0 {
		t.Fatalf("compensation %+v, want the %d ConfigMaps undone", res.Compensation, n)
	}
	if k := compensated(p); k != n {
		t.Errorf("%d nodes compensated, want %d", k, n)
	}
	if len(h.rt.objects) != 0 {
		t.Errorf("%d objects left after undoing the creates", len(h.rt.objects))
	}
	rel, err := h.backend.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Phase != engine.PhaseFailed || len(rel.State.Resources) != 0 {
		t.Errorf("release 1: %s with %d resources, want failed with none", rel.Phase, len(rel.State.Resources))
	}

	// Updates, undone by applying the prior again; one of those fails.
	if res, _, _ := apply(flatConfigMaps(n, "1", false)); res.Phase != engine.PhaseSucceeded {
		t.Fatalf("apply of the %d: %s %s", n, res.Phase, res.Error)
	}
	const stuck = "v1:ConfigMap:ns:c30"
	h.rt.onApply = func(id string) {
		if id == "v1:ConfigMap:ns:bad" { // every update applied: the undo of c30 will fail
			h.rt.mu.Lock()
			h.rt.reject[stuck] = true
			h.rt.mu.Unlock()
		}
	}
	res, p, events = apply(flatConfigMaps(n, "2", true))
	batches, singles, _ = undoSteps(events)
	if batches == 0 || (batches+singles)*5 > n {
		t.Errorf("%d updates undone in %d batches and %d single steps, want far fewer steps than resources", n, batches, singles)
	}
	if c := res.Compensation; c == nil || len(c.Resources) != n-1 || len(c.Errors) != 1 || !strings.HasPrefix(c.Errors[0], stuck+": ") {
		t.Fatalf("compensation %+v, want %d undone and %s's failure", res.Compensation, n-1, stuck)
	}
	if k := compensated(p); k != n-1 {
		t.Errorf("%d nodes compensated, want %d", k, n-1)
	}
	for id, attrs := range h.rt.objects {
		want := "1"
		if id == stuck {
			want = "2"
		}
		if got := fmt.Sprint(attrs["data"].(map[string]any)["v"]); got != want {
			t.Errorf("%s has v=%s after the undo, want %s", id, got, want)
		}
	}
}

// TestCompensationInBatchesFitsWhereSingleStepsDoNot: with the room left for
// undoing smaller than three events a resource (the least one activity of its
// own takes: scheduled, started, completed), single undo steps would stop
// short and leave resources not undone; batches undo all of them.
func TestCompensationInBatchesFitsWhereSingleStepsDoNot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	const n = 60
	budget := compensationBudget
	defer func() { compensationBudget = budget }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newHarness(t)
	h.rt.reject["v1:ConfigMap:ns:bad"] = true
	tc := startWorker(t, h.acts)
	hash, err := h.backend.PutSpec(ctx, flatConfigMaps(n, "1", true))
	if err != nil {
		t.Fatal(err)
	}
	// The apply of n flat ConfigMaps (plan, preview, batches) takes fewer
	// than 100 events before the undoing starts.
	compensationBudget = 190
	wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow,
		runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true, Parallelism: 4, RollbackOnFailure: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := runResult(ctx, wr)
	if err == nil {
		t.Fatal("the apply with a rejected resource succeeded")
	}
	events := history(ctx, t, tc, wr)
	batches, singles, first := undoSteps(events)
	t.Logf("undoing began at event %d of %d (%d batches, %d single steps)", first, len(events), batches, singles)
	if first == 0 || int64(compensationBudget)-first >= 3*n {
		t.Fatalf("undoing began at event %d: the budget of %d leaves room for %d single steps, the test needs less", first, compensationBudget, n)
	}
	if res.Compensation == nil || len(res.Compensation.Resources) != n || len(res.Compensation.Errors) != 0 {
		t.Fatalf("compensation %+v, want the %d ConfigMaps undone", res.Compensation, n)
	}
	if len(h.rt.objects) != 0 {
		t.Errorf("%d objects left after undoing the creates", len(h.rt.objects))
	}
}

// BenchmarkCompensationHistory reports the history events a failed apply of
// n flat ConfigMaps with RollbackOnFailure takes to undo them (from the first
// undo step scheduled to the end of the run) and what it left not undone.
// Run with -benchtime=1x: each iteration is a whole run on a Temporal server.
func BenchmarkCompensationHistory(b *testing.B) {
	for _, n := range []int{60, 2000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			be, err := local.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			rt := &fakeRuntime{objects: map[string]map[string]any{}, reject: map[string]bool{"v1:ConfigMap:ns:bad": true}}
			tc := startWorker(b, activities.New(be, rt, notRunning{}))
			hash, err := be.PutSpec(ctx, flatConfigMaps(n, "1", true))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow,
					runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true, RollbackOnFailure: true})
				if err != nil {
					b.Fatal(err)
				}
				res, _ := runResult(ctx, wr)
				if res.Compensation == nil {
					b.Fatalf("run not compensated: %+v", res)
				}
				events := history(ctx, b, tc, wr)
				batches, singles, first := undoSteps(events)
				b.ReportMetric(float64(int64(len(events))-first+1), "undo-events/run")
				b.ReportMetric(float64(len(events)), "events/run")
				b.ReportMetric(float64(batches+singles), "undo-steps/run")
				b.ReportMetric(float64(len(res.Compensation.Resources)), "undone/run")
				b.ReportMetric(float64(len(res.Compensation.Errors)), "undo-errors/run")
				if len(res.Compensation.Errors) > 0 {
					b.Log(res.Compensation.Errors[len(res.Compensation.Errors)-1])
				}
			}
		})
	}
}
