package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// hookCallTimeout bounds one RunHooks step: several hooks, each waited for up
// to the run's timeout, one after another. The step heartbeats, so a dead
// worker's is retried within seconds, and a retry finds the objects it made.
const hookCallTimeout = 2 * time.Hour

// hookSteps runs a run's hooks (engine.Hook) at their points: nil, and no
// step at all, when the plan says the spec has none (or the run replays a
// history recorded before hooksChange).
type hookSteps struct {
	r   *run
	rel activities.ReleaseInfo
	op  engine.Operation
}

// newHookSteps returns the hook steps of a run whose plan is made.
func (r *run) newHookSteps(ctx workflow.Context, rel activities.ReleaseInfo, op engine.Operation) *hookSteps {
	if r.planHooks == 0 || changeVersion(ctx, hooksChange, hooksVersion) < hooksVersion {
		return nil
	}
	return &hookSteps{r: r, rel: rel, op: op}
}

// start starts the RunHooks step of point p (nil: no hooks).
func (h *hookSteps) start(ctx workflow.Context, p engine.HookPoint) workflow.Future {
	if h == nil {
		return nil
	}
	in := activities.HookInput{Key: h.rel.Key, SpecHash: h.rel.SpecHash, PriorRevision: h.rel.PriorRevision,
		Operation: h.op, Point: p, Settings: h.r.in.Settings, Timeout: h.r.in.Timeout}
	return workflow.ExecuteActivity(heartbeatStep(ctx, hookCallTimeout, string(p)+" hooks"), acts.RunHooks, in)
}

// wait waits for a step start started, records what ran, and returns the
// step's failure or the failed hook's.
func (h *hookSteps) wait(ctx workflow.Context, f workflow.Future) error {
	if f == nil {
		return nil
	}
	var res activities.HookResult
	if err := f.Get(ctx, &res); err != nil {
		return err
	}
	h.r.hookRuns = append(h.r.hookRuns, res.Runs...)
	if res.Error != "" {
		return errors.New(res.Error)
	}
	return nil
}

// run runs the hooks of point p.
func (h *hookSteps) run(ctx workflow.Context, p engine.HookPoint) error {
	return h.wait(ctx, h.start(ctx, p))
}

// failed runs the SyncFail hooks after the run failed with err, in a context
// a cancel does not stop, and returns err (joined with theirs, if they
// failed too).
func (h *hookSteps) failed(ctx workflow.Context, err error) error {
	if h == nil || err == nil || h.op == engine.OperationDestroy {
		return err
	}
	fctx, _ := workflow.NewDisconnectedContext(ctx)
	if ferr := h.run(fctx, engine.HookPointFail); ferr != nil {
		return errors.Join(err, ferr)
	}
	return err
}

// Test runs the test hooks of a stack's latest release (RunTests), as helm
// test does, on the workspace's task queue. It changes no release: what the
// tests did is its result, and a test that failed fails the workflow too.
func Test(ctx workflow.Context, in runspec.TestInput) (runspec.TestResult, error) {
	// Not withRuntimeQueue: this workflow is newer than runtimeQueueChange.
	ctx = workflow.WithValue(ctx, runtimeQueueKey{}, in.Settings.TaskQueue)
	var res runspec.TestResult
	if err := checkStack(ctx, in.Project, in.Workspace); err != nil {
		return res, err
	}
	if err := workflow.ExecuteActivity(heartbeatStep(ctx, hookCallTimeout, "test "+in.Project+"/"+in.Workspace), acts.RunTests, in).Get(ctx, &res); err != nil {
		return res, err
	}
	if res.Error != "" {
		return res, temporal.NewNonRetryableApplicationError(res.Error, activities.ErrTypeNode, nil, res)
	}
	return res, nil
}
