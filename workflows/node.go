package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
)

// nodeSteps says how a walk runs its nodes' steps: each is an ordinary
// activity. Running short Kubernetes steps as local activities measured 2-3x
// less orchestration per resource (docs/performance.md), but a workflow task
// busy with local activities takes signals and cancellation in only when it
// completes, so a cancel could arrive after the whole walk, and the steps no
// longer spread over a fleet's workers; see docs/performance.md.
type nodeSteps struct{}

// newNodeSteps decides, once per run, how its nodes' steps run.
func newNodeSteps(workflow.Context) nodeSteps { return nodeSteps{} }

// start starts the step that changes node in as c says (apply or delete) and
// returns its future. It is the one place a node's step is chosen: a step
// that must follow the apply (waiting for the resource to become healthy)
// chains after this one (applyNode).
func (nodeSteps) start(ctx workflow.Context, c engine.Change, in activities.NodeInput) workflow.Future {
	if c.Action == engine.Delete {
		return workflow.ExecuteActivity(deleteStep(ctx, c.Type, "delete "+in.ID), acts.DeleteResource, in)
	}
	return workflow.ExecuteActivity(applyStep(ctx, c.Type, "apply "+in.ID), acts.ApplyResource, in)
}
