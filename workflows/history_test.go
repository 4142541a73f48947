package workflows

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestHistoryNearItsLimitFailsTheRelease: a chain whose steps would take the
// run's history past the budget stops starting steps there; the release ends
// failed, naming how far it got, with what it applied recorded; an apply run
// again goes on from there and finishes. (Temporal itself would end the run at
// its limit with the release left applying.)
//
// It runs on a Temporal server: the test environment does not count history.
func TestHistoryNearItsLimitFailsTheRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	budget := historyBudget
	withHistoryBudget(t, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newHarness(t)
	// Slow enough that the chain's local steps give their workflow task back
	// (localStepBudget) several times: only then does the history grow.
	h.rt.onApply = func(string) { time.Sleep(40 * time.Millisecond) }
	tc := startWorker(t, h.acts)
	spec := &engine.Spec{Resources: []engine.Resource{widget("n0")}}
	for i := 1; i < 120; i++ {
		spec.Resources = append(spec.Resources, widget(fmt.Sprintf("n%d", i), fmt.Sprintf("kumo.test/v1:Widget:ns:n%d", i-1)))
	}
	hash, err := h.backend.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	apply := func() (runspec.Result, error) {
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow,
			runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true})
		if err != nil {
			t.Fatal(err)
		}
		var res runspec.Result
		err = wr.Get(ctx, &res)
		return res, err
	}
	_, err = apply()
	if err == nil || !strings.Contains(err.Error(), "near Temporal's limit") {
		t.Fatalf("apply of a chain past the history budget: %v, want stopped near the limit", err)
	}
	applied := len(h.rt.applied)
	if applied == 0 || applied >= len(spec.Resources) {
		t.Fatalf("applied %d of %d before the budget, want some but not all", applied, len(spec.Resources))
	}
	rel, err := h.backend.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Phase != engine.PhaseFailed || len(rel.State.Resources) != applied {
		t.Fatalf("release 1: %s with %d resources, want failed with the %d applied", rel.Phase, len(rel.State.Resources), applied)
	}
	historyBudget = budget
	res, err := apply()
	if err != nil || res.Phase != engine.PhaseSucceeded {
		t.Fatalf("apply again: %v (%+v)", err, res.Phase)
	}
	if len(h.rt.applied) != len(spec.Resources) {
		t.Fatalf("after both applies %d resources applied, want each of the %d once", len(h.rt.applied), len(spec.Resources))
	}
}

// withHistoryBudget sets historyBudget to n until the test ends.
func withHistoryBudget(t testing.TB, n int) {
	budget := historyBudget
	t.Cleanup(func() { historyBudget = budget })
	historyBudget = n
}
