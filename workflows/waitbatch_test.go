package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// sickRuntime is waitingRuntime whose resources named in sick turn Degraded
// instead of Healthy.
type sickRuntime struct {
	*waitingRuntime
	sick map[string]bool
}

func (s *sickRuntime) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return s, nil
}

func (s *sickRuntime) WaitHealthy(ctx context.Context, r *engine.Resource, opts runtime.WaitOptions) (health.Result, error) {
	if s.sick[r.ID] {
		h := health.Result{Status: health.Degraded, Message: "ImagePullBackOff"}
		return h, runtime.Permanent(&runtime.HealthError{ID: r.ID, Health: h})
	}
	return s.waitingRuntime.WaitHealthy(ctx, r, opts)
}

// TestHealthWaitsShareAStepOnceTheHistoryIsLong: once a run's history is
// long (longHistory), the resources of a batch that wait for health wait in
// one WaitResources step instead of a WaitResource each, so 300 of them
// finish within a history budget of 120 events, each with its health
// recorded. One that turns Degraded fails alone: the others of its step end
// healthy, its dependent is never applied, and the release fails naming it.
func TestHealthWaitsShareAStepOnceTheHistoryIsLong(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	withHistoryBudget(t, 120)
	// The batches ordinary, as a larger plan's are: local ones would leave
	// the history short when the waits start.
	withLocalBatchMax(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 300
	ns := nsResource()
	spec := &engine.Spec{Resources: []engine.Resource{ns}}
	for i := range n {
		spec.Resources = append(spec.Resources, notReady(fmt.Sprintf("w%03d", i), ns.ID))
	}
	sickID := spec.Resources[n].ID
	spec.Resources = append(spec.Resources, cm("after-sick", sickID))

	for _, sick := range []bool{false, true} {
		h := newHarness(t)
		rt := &sickRuntime{waitingRuntime: &waitingRuntime{h.rt}, sick: map[string]bool{}}
		if sick {
			rt.sick[sickID] = true
		}
		h.acts = activities.New(h.backend, rt, notRunning{})
		tc := startWorker(t, h.acts)
		wr := startApply(ctx, t, h, tc, spec, runspec.RunInput{Parallelism: 10})
		res, err := runResult(ctx, wr)
		events := history(ctx, t, tc, wr)
		acts := startedActivities(events)
		batches, singles := count(acts, activities.WaitResourcesActivity), count(acts, activities.WaitResourceActivity)
		t.Logf("sick=%v: %d history events, %d WaitResources, %d WaitResource", sick, len(events), batches, singles)
		if batches == 0 || batches+singles > n/10 {
			t.Errorf("sick=%v: %d WaitResources and %d WaitResource steps for %d waits, want a few shared steps", sick, batches, singles, n)
		}
		if !sick {
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			healthy := 0
			for _, node := range queryProgress(ctx, t, tc, wr).Nodes {
				if strings.HasSuffix(node.Health, "→ Healthy") {
					healthy++
				}
			}
			if healthy != n {
				t.Errorf("%d nodes' health went to Healthy, want %d", healthy, n)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), sickID) || !strings.Contains(err.Error(), "ImagePullBackOff") {
			t.Fatalf("apply with %s Degraded: %v, want its failure", sickID, err)
		}
		if slices.Contains(h.rt.applied, "v1:ConfigMap:ns:after-sick") {
			t.Error("the Degraded resource's dependent was applied")
		}
		rel, err := h.backend.GetRelease(ctx, "p", "w", res.Revision)
		if err != nil {
			t.Fatal(err)
		}
		if rel.Phase != engine.PhaseFailed || len(rel.State.Resources) != n+1 {
			t.Errorf("release %s recording %d resources, want failed with the namespace and all %d applied", rel.Phase, len(rel.State.Resources), n)
		}
	}
}

func count(names []string, name string) int {
	c := 0
	for _, n := range names {
		if n == name {
			c++
		}
	}
	return c
}

// BenchmarkHealthWaitHistory applies n resources that each wait for health
// (a fake runtime: healthy at once) and reports the run's history and its
// wait steps. Below longHistory every wait is a step of its own; past it the
// waits after a batch share one, so 20,000 of them fit in one run.
func BenchmarkHealthWaitHistory(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			be, err := local.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			rt := &waitingRuntime{&fakeRuntime{objects: map[string]map[string]any{}, reject: map[string]bool{}}}
			tc := startWorker(b, activities.New(be, rt, notRunning{}))
			ns := nsResource()
			spec := &engine.Spec{Resources: []engine.Resource{ns}}
			for i := range n {
				spec.Resources = append(spec.Resources, notReady(fmt.Sprintf("w%05d", i), ns.ID))
			}
			hash, err := be.PutSpec(ctx, spec)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for k := range b.N {
				wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("kumo/p/w%d", k), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow,
					runspec.RunInput{Project: "p", Workspace: fmt.Sprintf("w%d", k), SpecHash: hash, AutoApprove: true})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := runResult(ctx, wr); err != nil {
					b.Fatalf("apply of %d waiting resources: %v", n, err)
				}
				events := history(ctx, b, tc, wr)
				acts := startedActivities(events)
				b.ReportMetric(float64(len(events)), "events/run")
				b.ReportMetric(float64(count(acts, activities.WaitResourceActivity)), "single-waits/run")
				b.ReportMetric(float64(count(acts, activities.WaitResourcesActivity)), "shared-waits/run")
			}
		})
	}
}
