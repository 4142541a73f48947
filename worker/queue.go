package worker

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine/runtime/registry"
)

// runtimeActivities are the steps a run puts on its workspace's task queue
// (temporal.taskQueue): those that touch Kubernetes or run Terraform. Each
// records its resource in the backend itself, so a queue's workers need the
// backend too; the release lifecycle (create, phase, finish), planning and
// generation stay on the default queue.
var runtimeActivities = map[string]bool{
	activities.PreviewResourceActivity:     true,
	activities.PreviewResourcesActivity:    true,
	activities.PreviewNodeActivity:         true,
	activities.RefreshResourcesActivity:    true,
	activities.ApplyResourceActivity:       true,
	activities.ApplyResourcesActivity:      true,
	activities.DeleteResourceActivity:      true,
	activities.DeleteResourcesActivity:     true,
	activities.WaitResourceActivity:        true,
	activities.WaitResourcesActivity:       true,
	activities.CompensateResourceActivity:  true,
	activities.CompensateResourcesActivity: true,
	activities.CheckDriftActivity:          true,
	activities.ReadStatusActivity:          true,
}

// NewForQueue returns a worker (not yet started) serving the runtime steps of
// the runs whose workspace names queue: no workflows, no other activities.
func NewForQueue(c client.Client, b backend.Backend, queue string, o Options) sdkworker.Worker {
	w := sdkworker.New(c, queue, sdkworker.Options{WorkerStopTimeout: o.StopTimeout, DisableWorkflowWorker: true, Interceptors: interceptors,
		MaxHeartbeatThrottleInterval: activities.HeartbeatThrottle, MaxConcurrentActivityTaskPollers: activityPollers})
	activities.Register(runtimeOnly{w}, activities.New(b, registry.New(), RunChecker(c)))
	return w
}

// runtimeOnly registers only the runtime activities.
type runtimeOnly struct{ sdkworker.Worker }

func (r runtimeOnly) RegisterActivityWithOptions(a interface{}, o activity.RegisterOptions) {
	if runtimeActivities[o.Name] {
		r.Worker.RegisterActivityWithOptions(a, o)
	}
}
