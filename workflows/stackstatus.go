package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/runspec"
)

// A status read of a large stack with its tree of owned objects makes many
// calls; its activity heartbeats, so a dead worker's read is retried soon.
const statusReadTimeout = 10 * time.Minute

// StackStatus reads the live status of a stack on its workspace's task queue
// (on TaskQueue without one), so that `kumo status` of a workspace served by
// workers inside its cluster's network needs no kubeconfig outside it. It
// only reads: it takes no release lock and files no search attributes, so it
// is not a run (`kumo run list` does not show it).
func StackStatus(ctx workflow.Context, in runspec.StatusInput) (runspec.StackStatus, error) {
	// Not withRuntimeQueue: this workflow is newer than runtimeQueueChange,
	// so it has no history without a queue to replay, and needs no marker
	// (nor the TemporalChangeVersion upsert that comes with it).
	ctx = workflow.WithValue(ctx, runtimeQueueKey{}, in.Settings.TaskQueue)
	var st runspec.StackStatus
	if err := checkStack(ctx, in.Project, in.Workspace); err != nil {
		return st, err
	}
	err := workflow.ExecuteActivity(heartbeatStep(ctx, statusReadTimeout, "read status "+in.Project+"/"+in.Workspace), acts.ReadStatus, in).Get(ctx, &st)
	return st, err
}
