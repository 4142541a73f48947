package workflows

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestDeadWorkersCallsAreRetriedWithinSeconds: every activity of an apply that
// may run longer than a short call has a heartbeat timeout no longer than a
// short call's, so when the worker running it is killed, the run goes on
// within seconds instead of waiting out the call's whole timeout. A local step
// (the applies here) needs no heartbeat: a killed worker's workflow task times
// out within seconds and the next worker runs it again.
func TestDeadWorkersCallsAreRetriedWithinSeconds(t *testing.T) {
	h := newHarness(t)
	h.rollbackOnFailure = true
	h.rt.reject["v1:ConfigMap:ns:b"] = true // a failure, so compensation runs too
	seen := map[string]bool{}
	_, err := h.runWith(Apply, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a")}},
		func(env *testsuite.TestWorkflowEnvironment, _ *runspec.RunInput) {
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				seen[info.ActivityType.Name] = true
				timeout := info.Deadline.Sub(info.StartedTime).Round(time.Second)
				if timeout > shortCallTimeout && (info.HeartbeatTimeout <= 0 || info.HeartbeatTimeout > shortCallTimeout) {
					t.Errorf("%s may run %s with heartbeat timeout %s: a killed worker's call would hold the run that long",
						info.ActivityType.Name, timeout, info.HeartbeatTimeout)
				}
			})
			env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
				seen[info.ActivityType.Name] = true
			})
		})
	if err == nil {
		t.Fatal("the apply with a rejected resource succeeded")
	}
	for _, name := range []string{"CreateRelease", "ApplyResource", "FinishRelease"} {
		if !seen[name] {
			t.Errorf("activity %s did not run (ran: %v)", name, seen)
		}
	}
}
