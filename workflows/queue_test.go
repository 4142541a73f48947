package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// noRuntime is the runtime of workers that must never run a runtime step.
type noRuntime struct{}

func (noRuntime) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return nil, errors.New("a runtime step ran on the default queue")
}

// TestRuntimeStepsRunOnTheWorkspaceQueue: a run whose settings name a task
// queue puts every step that touches the runtime (preview, refresh, apply,
// wait, delete, compensation) on that queue, served here by a worker that polls it
// for activities only, while planning and the release lifecycle stay on
// TaskQueue, whose worker has no runtime at all.
func TestRuntimeStepsRunOnTheWorkspaceQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newHarness(t)
	tc := startWorker(t, activities.New(h.backend, noRuntime{}, notRunning{}))
	edge := worker.New(tc, "edge", worker.Options{DisableWorkflowWorker: true})
	activities.Register(edge, activities.New(h.backend, &waitingRuntime{h.rt}, notRunning{}))
	if err := edge.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(edge.Stop)

	h.rt.reject["v1:ConfigMap:ns:bad"] = true
	runs := []*engine.Spec{
		{Resources: []engine.Resource{cm("a"), notReady("slow")}},
		// deletes slow, refreshes a's record (it now depends on x), creates
		// x, fails on bad: x is undone, slow recreated
		{Resources: []engine.Resource{cm("a", "v1:ConfigMap:ns:x"), cm("x"), cm("bad", "v1:ConfigMap:ns:x")}},
		// one at a time: creates x, y and z in one batch, fails on bad,
		// and undoes the three in one batch
		{Resources: []engine.Resource{cm("a", "v1:ConfigMap:ns:x"), cm("x"), cm("y"), cm("z"),
			cm("bad", "v1:ConfigMap:ns:x", "v1:ConfigMap:ns:y", "v1:ConfigMap:ns:z")}},
	}
	kinds := map[string]bool{}
	for i, spec := range runs {
		hash, err := h.backend.PutSpec(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		in := runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true, RollbackOnFailure: true,
			Settings: runspec.RuntimeSettings{TaskQueue: "edge"}}
		if i == 2 {
			in.Parallelism = 1
		}
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow, in)
		if err != nil {
			t.Fatal(err)
		}
		var res runspec.Result
		err = wr.Get(ctx, &res)
		if want := i >= 1; (err != nil) != want {
			t.Fatalf("run %d: error %v, want one: %v", i+1, err, want)
		}
		events := history(ctx, t, tc, wr)
		for _, e := range events {
			if m := e.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() != "Version" {
				// The release's own steps are local: they touch only the
				// backend, and run on the workflow's worker, TaskQueue's.
				var data struct{ ActivityType string }
				if p := m.GetDetails()["data"].GetPayloads(); m.GetMarkerName() == "LocalActivity" && len(p) > 0 {
					_ = json.Unmarshal(p[0].GetData(), &data)
				}
				if slices.Contains(releaseActivities, data.ActivityType) {
					kinds[data.ActivityType] = true
					continue
				}
				t.Errorf("run %d: a %s marker (%s): the workflow's worker ran a step itself", i+1, m.GetMarkerName(), data.ActivityType)
			}
			a := e.GetActivityTaskScheduledEventAttributes()
			if a == nil {
				continue
			}
			typ, queue := a.GetActivityType().GetName(), a.GetTaskQueue().GetName()
			kinds[typ] = true
			want := runspec.TaskQueue
			switch typ {
			case activities.PreviewResourceActivity, activities.PreviewNodeActivity, activities.RefreshResourcesActivity,
				activities.ApplyResourceActivity, activities.WaitResourceActivity, activities.DeleteResourceActivity,
				activities.CompensateResourceActivity, activities.PreviewResourcesActivity, activities.ApplyResourcesActivity,
				activities.DeleteResourcesActivity, activities.CompensateResourcesActivity:
				want = "edge"
			}
			if queue != want {
				t.Errorf("run %d: %s on queue %q, want %q", i+1, typ, queue, want)
			}
		}
	}
	for _, typ := range []string{activities.PreviewNodeActivity, activities.RefreshResourcesActivity, activities.ApplyResourceActivity, activities.WaitResourceActivity,
		activities.DeleteResourceActivity, activities.CompensateResourceActivity, activities.ApplyResourcesActivity, activities.CompensateResourcesActivity,
		activities.CreateReleaseActivity, activities.FinishReleaseActivity} {
		if !kinds[typ] {
			t.Errorf("no %s step ran: the test does not cover it", typ)
		}
	}
}
