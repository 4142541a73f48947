package workflows

import (
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
)

// localStepsChange marks runs whose short Kubernetes node steps are local
// activities (see nodeSteps); runs recorded before it replay with regular ones.
const localStepsChange = "local-kubernetes-steps"

// nodeSteps says how a walk runs its nodes' steps.
type nodeSteps struct {
	// local: a Kubernetes apply, or delete of anything but a Namespace, is a
	// local activity. One server-side apply takes milliseconds, while a regular
	// activity costs three history events and two round trips through the
	// task queue (~6 ms of orchestration per resource, measured in
	// docs/performance.md); a local activity is one marker, written with its
	// neighbours' when the workflow task completes. The price: a crash re-runs
	// the local activities completed since the last workflow task (at most
	// ~8 s of them), which is safe as every step is idempotent and records its
	// state entry itself. Terraform calls and Namespace deletes (which wait for
	// the namespace's finalization) stay regular heartbeating activities.
	local bool
}

// newNodeSteps decides, once per run, how its nodes' steps run.
func newNodeSteps(ctx workflow.Context) nodeSteps {
	return nodeSteps{local: workflow.GetVersion(ctx, localStepsChange, workflow.DefaultVersion, 1) >= 1}
}

// start starts the step that changes node in as c says (apply or delete) and
// returns its future. It is the one place a node's step is chosen: a step
// that must follow the apply (waiting for the resource to become healthy)
// belongs here, chained after this one.
func (s nodeSteps) start(ctx workflow.Context, c engine.Change, in activities.NodeInput) workflow.Future {
	// A cancelled run still lets its in-flight steps finish, so their results
	// are recorded before the release is finished (regular activities:
	// WaitForCancellation). Once cancelled, nothing new starts.
	lctx := ctx
	if ctx.Err() == nil {
		lctx, _ = workflow.NewDisconnectedContext(ctx)
	}
	if c.Action == engine.Delete {
		summary := "delete " + in.ID
		if s.local && c.Type == engine.Kubernetes && !isNamespace(in.ID) {
			return workflow.ExecuteLocalActivity(localStep(lctx, deleteCallTimeout, summary), acts.DeleteResource, in)
		}
		return workflow.ExecuteActivity(deleteStep(ctx, c.Type, summary), acts.DeleteResource, in)
	}
	summary := "apply " + in.ID
	if s.local && c.Type == engine.Kubernetes {
		return workflow.ExecuteLocalActivity(localStep(lctx, shortCallTimeout, summary), acts.ApplyResource, in)
	}
	return workflow.ExecuteActivity(applyStep(ctx, c.Type, summary), acts.ApplyResource, in)
}

// isNamespace tells a Kubernetes Namespace's ID (v1:Namespace:name).
func isNamespace(id string) bool { return strings.HasPrefix(id, "v1:Namespace:") }
