package worker

import (
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine/runtime/registry"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/workflows"
)

// NewQueryOnly returns a worker (not yet started) that polls workflow tasks
// only, running local activities but no others: it answers queries (closed
// runs are replayed for them) without taking on the activities of runs in
// flight. `kumo run show` uses it with the embedded server.
func NewQueryOnly(c client.Client, b backend.Backend) sdkworker.Worker {
	w := sdkworker.New(c, runspec.TaskQueue, sdkworker.Options{LocalActivityWorkerOnly: true, Interceptors: []interceptor.WorkerInterceptor{workflows.Interceptor}})
	workflows.Register(w)
	// Local activities (previews) of a run that goes on here need them.
	activities.Register(w, activities.New(b, registry.New(), RunChecker(c)))
	return w
}
