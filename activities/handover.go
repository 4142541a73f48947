package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// handOver refuses a local step once the worker running it is stopping: a
// local step runs in the worker that holds the workflow task, so without this
// a worker draining after SIGTERM would go on driving a chain, step after
// step, for as long as its grace lasts. It does nothing first, so the step is
// safe to run again elsewhere. Ordinary activities a stopping worker still
// runs (it finishes what it was given) are not refused.
func handOver(ctx context.Context) error {
	if !activity.IsActivity(ctx) || !activity.GetInfo(ctx).IsLocalActivity {
		return nil
	}
	select {
	case <-activity.GetWorkerStopChannel(ctx):
		return temporal.NewNonRetryableApplicationError("the worker is stopping: the step is handed to another worker", ErrTypeWorkerStopping, nil)
	default:
		return nil
	}
}
