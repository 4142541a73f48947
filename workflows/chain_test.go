package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestLongChainsRunAsSteps: once a run's history is long (longHistory), a
// chain of ConfigMaps under a Namespace goes on as batch steps in dependency
// order, and is destroyed the same way, dependents first, each delete after
// the one before it; every resource's outcome is recorded, and the chain of
// 250 finishes within a history budget of 250 events. A failed apply of the
// chain is undone in chain steps as well. A chain of 250 widgets,
// kinds that may wait for health and so stay a step per node, stops at a
// budget of 150 (applies slow enough that the walk gives its workflow task back
// now and then: only then does the history grow, as in
// TestHistoryNearItsLimitFailsTheRelease).
func TestLongChainsRunAsSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	withHistoryBudget(t, 250)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 250
	ns := nsResource()
	chain := func(node func(name string, deps ...string) engine.Resource) (*engine.Spec, []string) {
		spec := &engine.Spec{Resources: []engine.Resource{ns}}
		order := []string{ns.ID}
		for i := range n {
			r := node(fmt.Sprintf("c%03d", i), spec.Resources[i].ID)
			spec.Resources = append(spec.Resources, r)
			order = append(order, r.ID)
		}
		return spec, order
	}
	run := func(h *harness, tc client.Client, workflow, spec string) (runspec.Result, []string, error) {
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, workflow,
			runspec.RunInput{Project: "p", Workspace: "w", SpecHash: spec, AutoApprove: true, Parallelism: 10})
		if err != nil {
			t.Fatal(err)
		}
		var res runspec.Result
		err = wr.Get(ctx, &res)
		events := history(ctx, t, tc, wr)
		t.Logf("%s of a chain of %d: %d history events", workflow, n+1, len(events))
		return res, resourceSteps(events), err
	}

	h := newHarness(t)
	tc := startWorker(t, h.acts)
	spec, order := chain(cm)
	hash, err := h.backend.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		workflow, spec, batch string
		records               int
	}{
		{runspec.ApplyWorkflow, hash, activities.ApplyResourcesActivity, n + 1},
		{runspec.DestroyWorkflow, "", activities.DeleteResourcesActivity, 0},
	} {
		res, steps, err := run(h, tc, c.workflow, c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.workflow, err)
		}
		if batches := slices.Index(steps, c.batch); batches < 0 || len(steps) > 4 {
			t.Errorf("%s: resource activities %v, want a few %s", c.workflow, steps, c.batch)
		}
		rel, err := h.backend.GetRelease(ctx, "p", "w", res.Revision)
		if err != nil {
			t.Fatal(err)
		}
		if rel.Phase != engine.PhaseSucceeded || len(rel.State.Resources) != c.records {
			t.Errorf("%s: release %s recording %d resources, want succeeded with %d: %s", c.workflow, rel.Phase, len(rel.State.Resources), c.records, rel.Error)
		}
	}
	if !slices.Equal(h.rt.applied, order) {
		t.Errorf("applied out of dependency order: %v", h.rt.applied)
	}
	slices.Reverse(order)
	if !slices.Equal(h.rt.deleted, order) {
		t.Errorf("deleted out of dependency order: %v", h.rt.deleted)
	}

	// A failed apply of the chain (its last ConfigMap rejected) is undone as
	// chain steps too, dependents first.
	h = newHarness(t)
	h.rt.reject[order[0]] = true // order is reversed: the chain's last
	tc = startWorker(t, h.acts)
	wr := startApply(ctx, t, h, tc, spec, runspec.RunInput{Parallelism: 10, RollbackOnFailure: true})
	res, err := runResult(ctx, wr)
	if err == nil || !strings.Contains(err.Error(), "rejected") {
		t.Fatalf("apply of a chain whose last resource is rejected: %v", err)
	}
	batches, singles, _ := undoSteps(history(ctx, t, tc, wr))
	if res.Compensation == nil || len(res.Compensation.Resources) != n || len(res.Compensation.Errors) > 0 {
		t.Errorf("compensation %+v, want the %d applied undone", res.Compensation, n)
	}
	if batches == 0 || batches+singles > n/2 {
		t.Errorf("undone in %d CompensateResources and %d CompensateResource steps, want a few chain steps", batches, singles)
	}
	if len(h.rt.objects) != 0 {
		t.Errorf("%d objects left after the compensation", len(h.rt.objects))
	}

	// The widgets' walk writes its local steps only when it gives its
	// workflow task back, and its preview's batches are local steps too:
	// a budget of 150 is reached well inside the chain.
	withHistoryBudget(t, 150)
	h = newHarness(t)
	h.rt.onApply = func(string) { time.Sleep(10 * time.Millisecond) }
	tc = startWorker(t, h.acts)
	spec, _ = chain(widget)
	if hash, err = h.backend.PutSpec(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(h, tc, runspec.ApplyWorkflow, hash); err == nil || !strings.Contains(err.Error(), "near Temporal's limit") {
		t.Errorf("apply of a chain of widgets: %v, want stopped near the history limit", err)
	}
}

// TestChainsRunAsChainSteps: from chainFromStart a chain of minLocalChain
// ConfigMaps or more runs as chain steps from its first node, with the
// history short: an apply of a Namespace and a chain of 30 ConfigMaps is the
// Namespace's local step and one ApplyResources, in dependency order; its
// destroy one DeleteResources, dependents first, and the Namespace's delete.
// Every resource's outcome is recorded. (A shorter chain keeps its local
// steps: TestChainStepsAreLocal.)
func TestChainsRunAsChainSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 30
	h := newHarness(t)
	tc := startWorker(t, h.acts)
	spec := &engine.Spec{Resources: []engine.Resource{nsResource()}}
	for i := range n {
		spec.Resources = append(spec.Resources, cm(fmt.Sprintf("c%03d", i), spec.Resources[i].ID))
	}
	hash, err := h.backend.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		workflow, spec string
		local, steps   []string
		records        int
	}{
		{runspec.ApplyWorkflow, hash, []string{"apply v1:Namespace:ns"}, []string{activities.ApplyResourcesActivity}, n + 1},
		{runspec.DestroyWorkflow, "", nil, []string{activities.DeleteResourcesActivity, activities.DeleteResourceActivity}, 0},
	} {
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, c.workflow,
			runspec.RunInput{Project: "p", Workspace: "w", SpecHash: c.spec, AutoApprove: true, Parallelism: 10})
		if err != nil {
			t.Fatal(err)
		}
		var res runspec.Result
		if err := wr.Get(ctx, &res); err != nil {
			t.Fatalf("%s: %v", c.workflow, err)
		}
		events := history(ctx, t, tc, wr)
		if got := localSteps(t, events); !slices.Equal(got, c.local) {
			t.Errorf("%s: local steps %v, want %v", c.workflow, got, c.local)
		}
		if got := resourceSteps(events); !slices.Equal(got, c.steps) {
			t.Errorf("%s: resource activities %v, want %v", c.workflow, got, c.steps)
		}
		rel, err := h.backend.GetRelease(ctx, "p", "w", res.Revision)
		if err != nil {
			t.Fatal(err)
		}
		if rel.Phase != engine.PhaseSucceeded || len(rel.State.Resources) != c.records {
			t.Errorf("%s: release %s recording %d resources, want succeeded with %d: %s", c.workflow, rel.Phase, len(rel.State.Resources), c.records, rel.Error)
		}
		t.Logf("%s of a chain of %d: %d history events", c.workflow, n+1, len(events))
	}
	order := make([]string, len(spec.Resources))
	for i, r := range spec.Resources {
		order[i] = r.ID
	}
	if !slices.Equal(h.rt.applied, order) {
		t.Errorf("applied out of dependency order: %v", h.rt.applied)
	}
	slices.Reverse(order)
	if !slices.Equal(h.rt.deleted, order) {
		t.Errorf("deleted out of dependency order: %v", h.rt.deleted)
	}
}

// TestChainsOnAWorkspaceQueueAreChainSteps: a run whose runtime steps go to a
// workspace's queue has no local steps, so from chainFromStart a chain of any
// length runs as one chain step there (chainMin), not an ordinary activity
// per node: a chain of three ConfigMaps is one ApplyResources on the queue,
// in dependency order.
func TestChainsOnAWorkspaceQueueAreChainSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := newHarness(t)
	tc := startWorker(t, activities.New(h.backend, noRuntime{}, notRunning{}))
	edge := worker.New(tc, "edge", worker.Options{DisableWorkflowWorker: true})
	activities.Register(edge, h.acts)
	if err := edge.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(edge.Stop)
	spec := &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a"), cm("c", "v1:ConfigMap:ns:b")}}
	wr := startApply(ctx, t, h, tc, spec, runspec.RunInput{Parallelism: 10, Settings: runspec.RuntimeSettings{TaskQueue: "edge"}})
	if err := wr.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := resourceSteps(history(ctx, t, tc, wr)); !slices.Equal(got, []string{activities.ApplyResourcesActivity}) {
		t.Errorf("resource activities %v, want one ApplyResources", got)
	}
	if got := strings.Join(h.rt.applied, ","); got != "v1:ConfigMap:ns:a,v1:ConfigMap:ns:b,v1:ConfigMap:ns:c" {
		t.Errorf("applied %s", got)
	}
}
