package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// TestDriftCheck: after an apply, a resource changed and one removed out of
// band are reported through the DriftCheck workflow, and the report is stored
// under the check's run ID.
func TestDriftCheck(t *testing.T) {
	h := newHarness(t)
	a, b, c := cm("a"), cm("b"), cm("c")
	a.Attributes["data"] = map[string]any{"k": "v"}
	recordRelease(t, h, a, b, c)
	h.rt.objects[a.ID]["data"] = map[string]any{"k": "changed"}
	delete(h.rt.objects, b.ID)

	env := h.NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "kumo-drift/p/w/1"})
	// The first workflow of a test binary pays one-off initialisation inside
	// the workflow goroutine; on a loaded machine that exceeds the 1 s default.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
	activities.Register(env, h.acts)
	Register(env)
	env.ExecuteWorkflow(runspec.DriftWorkflow, runspec.DriftInput{Project: "p", Workspace: "w"})
	var res runspec.DriftResult
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Revision != 1 || res.Counts.Drifted != 1 || res.Counts.Missing != 1 || res.Counts.InSync != 1 || res.ExitCode != 2 {
		t.Errorf("result %+v", res)
	}
	if got := strings.Join(res.NotInSync, ","); got != "drifted "+a.ID+",missing "+b.ID {
		t.Errorf("not in sync: %s", got)
	}
	if !strings.HasPrefix(res.Summary, "drift p/w rev 1: 1 of 3 drifted, 1 missing") {
		t.Errorf("summary %q", res.Summary)
	}
	rep, err := h.backend.DriftReport(context.Background(), "p", "w", res.RunID)
	if err != nil || rep.Counts != res.Counts {
		t.Fatalf("stored report %+v, %v", rep, err)
	}
	if f := rep.Resources[0].Fields; len(f) != 1 || f[0].Path != "/data/k" || f[0].Live != "changed" {
		t.Errorf("stored fields %+v", f)
	}
	if d := driftDetails(res); !strings.Contains(d, "- missing "+b.ID) {
		t.Errorf("details %q", d)
	}
}

// recordRelease makes revision 1 of p/w a succeeded apply of rs, applied to
// the fake runtime, without running an Apply.
func recordRelease(t *testing.T, h *harness, rs ...engine.Resource) {
	t.Helper()
	ctx := context.Background()
	hash, err := h.backend.PutSpec(ctx, &engine.Spec{Resources: rs})
	if err != nil {
		t.Fatal(err)
	}
	m := release.New(h.backend, h.rt, notRunning{})
	info, err := m.Begin(ctx, release.BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationApply, SpecHash: hash, WorkflowID: "kumo/p/w", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		out, err := h.rt.Apply(ctx, &r, runtime.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Record(ctx, info.Key, backend.StateEntry{ID: r.ID, Resource: out}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
		t.Fatal(err)
	}
}

// TestDriftCheckIsLocalWithoutARuntimeQueue: a check with no runtime queue
// runs CheckDrift as a local activity of the workflow's worker (no activity
// task round trip per scheduled check); a check whose workspace names a
// runtime queue runs it as an ordinary activity on that queue, where the
// cluster's credentials are, never on the workflow's worker.
func TestDriftCheckIsLocalWithoutARuntimeQueue(t *testing.T) {
	for _, queue := range []string{"", "edge"} {
		t.Run("queue="+queue, func(t *testing.T) {
			h := newHarness(t)
			recordRelease(t, h, cm("a"))
			env := h.NewTestWorkflowEnvironment()
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "kumo-drift/p/w/1", TaskQueue: runspec.TaskQueue})
			env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
			activities.Register(env, h.acts)
			Register(env)
			ordinary, local := map[string]string{}, map[string]bool{} // type → its task queue; type → ran
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				ordinary[info.ActivityType.Name] = info.TaskQueue
			})
			env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []interface{}) {
				local[info.ActivityType.Name] = true
			})
			env.ExecuteWorkflow(runspec.DriftWorkflow, runspec.DriftInput{Project: "p", Workspace: "w", Settings: runspec.RuntimeSettings{TaskQueue: queue}})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var res runspec.DriftResult
			if err := env.GetWorkflowResult(&res); err != nil || res.Counts.InSync != 1 {
				t.Fatalf("result %+v, %v", res, err)
			}
			q, asActivity := ordinary[activities.CheckDriftActivity]
			switch {
			case queue == "" && (asActivity || !local[activities.CheckDriftActivity]):
				t.Errorf("no runtime queue: CheckDrift ran as an activity on %q (local: %v), want a local activity", q, local[activities.CheckDriftActivity])
			case queue != "" && (q != queue || local[activities.CheckDriftActivity]):
				t.Errorf("runtime queue %s: CheckDrift ran on %q (local: %v), want an activity on %s only", queue, q, local[activities.CheckDriftActivity], queue)
			}
		})
	}
}
