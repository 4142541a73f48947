package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/runspec"
)

// gcTimeout bounds one collection: it reads every release file of the
// backend, which on a large S3 backend takes minutes; it heartbeats, so a
// dead worker's is retried within gcHeartbeat.
const (
	gcTimeout   = time.Hour
	gcHeartbeat = 30 * time.Second
)

// BackendGC is one collection of kumo's own records (runspec.GCInput;
// backend.Collect decides what goes): a single activity, started by the
// server's GC schedule or by hand. A collection that finds another one
// running fails, and the schedule's next tick tries again.
func BackendGC(ctx workflow.Context, in runspec.GCInput) (runspec.GCResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: gcTimeout, HeartbeatTimeout: gcHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 5},
		Summary:     "collect kumo's expired and unreferenced records",
	})
	var res runspec.GCResult
	err := workflow.ExecuteActivity(actx, acts.CollectGarbage, in).Get(ctx, &res)
	return res, err
}
