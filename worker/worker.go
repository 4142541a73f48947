// Package worker builds a Temporal worker that runs kumo's workflows and
// activities on the task queue "kumo". The CLI starts one in-process for the
// embedded server; `kumo worker` runs one against an existing Temporal cluster,
// and `kumo worker --task-queue Q` one that serves only the runtime steps of
// the workspaces routed to queue Q.
package worker

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine/runtime/registry"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/workflows"
)

// New returns a worker (not yet started) for kumo's task queue, reading no
// stack directory (see Options.Generation).
func New(c client.Client, b backend.Backend) sdkworker.Worker {
	return NewWithOptions(c, b, Options{})
}

// NewWithOptions is New for a long-lived worker (kumo server, kumo worker).
func NewWithOptions(c client.Client, b backend.Backend, o Options) sdkworker.Worker {
	w := sdkworker.New(c, runspec.TaskQueue, sdkworker.Options{WorkerStopTimeout: o.StopTimeout, MaxHeartbeatThrottleInterval: activities.HeartbeatThrottle, Interceptors: interceptors,
		MaxConcurrentActivityTaskPollers: activityPollers})
	workflows.Register(w)
	acts := activities.New(b, registry.New(), RunChecker(c))
	activities.SetGeneration(acts, o.Generation)
	activities.SetEvents(acts, o.Events)
	activities.SetPolicies(acts, o.Policies)
	activities.Register(w, acts)
	return w
}

// activityPollers is how many activity task polls a worker keeps open: as
// many as a run's default parallelism, so the batches a walk or a preview
// starts at once are taken at once. With the SDK's default of 2, ten batches
// scheduled together started one poll round trip apart, the last some
// 20-30 ms after the first (docs/performance.md).
const activityPollers = workflows.DefaultParallelism

// interceptors record kumo's metrics (metrics.go) and hand runs the subjects
// of the signals they receive (workflows.Interceptor).
var interceptors = []interceptor.WorkerInterceptor{&metrics{}, workflows.Interceptor}

// RunChecker asks Temporal whether a run is still going.
func RunChecker(c client.Client) release.RunChecker { return runChecker{c} }

type runChecker struct{ c client.Client }

func (r runChecker) Running(ctx context.Context, workflowID, runID string) (bool, error) {
	d, err := r.c.DescribeWorkflowExecution(ctx, workflowID, runID)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, fmt.Errorf("run %s of workflow %s: %w", runID, workflowID, release.ErrRunUnknown)
	}
	if err != nil {
		return false, err
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}
