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
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/runspec"
)

// TestStackStatusReadsOnTheWorkspaceQueue: the StackStatus workflow reads the
// stack with the ReadStatus activity on the workspace's task queue when it
// names one, so its workers (not the CLI's machine) reach the cluster, and on
// the default queue without one.
func TestStackStatusReadsOnTheWorkspaceQueue(t *testing.T) {
	for _, queue := range []string{"edge", ""} {
		t.Run("queue="+queue, func(t *testing.T) {
			h := newHarness(t)
			recordRelease(t, h, cm("a"), cm("b"))

			env := h.NewTestWorkflowEnvironment()
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: runspec.StatusWorkflowID("p", "w", time.Unix(1, 0)), TaskQueue: runspec.TaskQueue})
			env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
			activities.Register(env, h.acts)
			Register(env)
			ran := map[string]string{} // activity type → its task queue
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				ran[info.ActivityType.Name] = info.TaskQueue
			})
			env.ExecuteWorkflow(runspec.StatusWorkflow, runspec.StatusInput{Project: "p", Workspace: "w", Settings: runspec.RuntimeSettings{TaskQueue: queue}})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var st runspec.StackStatus
			if err := env.GetWorkflowResult(&st); err != nil {
				t.Fatal(err)
			}
			if st.Revision != 1 || len(st.Resources) != 2 || st.Health.Status != health.Healthy {
				t.Errorf("status %+v", st)
			}
			want := queue
			if want == "" {
				want = runspec.TaskQueue
			}
			if len(ran) != 1 || ran[activities.ReadStatusActivity] != want {
				t.Errorf("activities run (type → queue): %v, want only %s on %s", ran, activities.ReadStatusActivity, want)
			}
		})
	}
}

// TestStackStatusWithoutRelease: a stack with no release fails at once, with
// the message the local read gives.
func TestStackStatusWithoutRelease(t *testing.T) {
	h := newHarness(t)
	env := h.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
	activities.Register(env, h.acts)
	Register(env)
	attempts := 0
	env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) { attempts++ })
	env.ExecuteWorkflow(runspec.StatusWorkflow, runspec.StatusInput{Project: "p", Workspace: "w", Settings: runspec.RuntimeSettings{TaskQueue: "edge"}})
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "no status: p/w has no releases") {
		t.Fatalf("error %v", err)
	}
	if attempts != 1 {
		t.Errorf("ReadStatus ran %d times, want once (not retried)", attempts)
	}
}
