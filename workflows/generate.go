package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/runspec"
)

// Generation runs external generators, each bounded by its own timeout; the
// activity heartbeats, so a dead worker's attempt is retried within seconds.
const (
	generateTimeout   = time.Hour
	generateHeartbeat = 10 * time.Second
)

// Generate builds a stack's Spec for a workspace and stores it in the backend; the
// result names it by hash.
func Generate(ctx workflow.Context, in runspec.GenerateInput) (runspec.GenerateResult, error) {
	var res runspec.GenerateResult
	if err := checkStack(ctx, in.Project, in.Workspace); err != nil {
		return res, err
	}
	err := workflow.ExecuteActivity(generateStep(ctx), acts.Generate, in).Get(ctx, &res)
	return res, err
}

// generateSpec is the first step of a Preview or Apply started from a stack
// rather than a ready Spec: afterwards the run works on the stored Spec's hash.
func (r *run) generateSpec(ctx workflow.Context) error {
	if r.in.SpecHash != "" || r.in.Source == nil {
		return nil
	}
	r.setStage(runspec.StageGenerating, 0)
	var res runspec.GenerateResult
	if err := workflow.ExecuteActivity(generateStep(ctx), acts.Generate, *r.in.Source).Get(ctx, &res); err != nil {
		return err
	}
	r.in.SpecHash, r.in.Stack = res.SpecHash, res.Stack
	return nil
}

func generateStep(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: generateTimeout,
		HeartbeatTimeout:    generateHeartbeat,
		RetryPolicy:         retryPolicy,
		Summary:             "generate",
	})
}
