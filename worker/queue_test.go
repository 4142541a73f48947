package worker

import (
	"testing"

	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
)

// registered is a worker that only notes the names of the activities
// registered with it.
type registered struct {
	sdkworker.Worker
	names map[string]bool
}

func (r *registered) RegisterActivityWithOptions(_ interface{}, o activity.RegisterOptions) {
	r.names[o.Name] = true
}

// TestQueueWorkerRegistersTheBatchSteps: a workspace queue's worker serves
// every batch step runs put on that queue, the undoing of a failed apply
// included (a step no worker of the queue registers waits there until it
// times out), and none of the release lifecycle.
func TestQueueWorkerRegistersTheBatchSteps(t *testing.T) {
	r := &registered{names: map[string]bool{}}
	activities.Register(runtimeOnly{r}, activities.New(nil, nil, nil))
	for _, name := range []string{activities.PreviewResourcesActivity, activities.ApplyResourcesActivity, activities.DeleteResourcesActivity,
		activities.RefreshResourcesActivity, activities.CompensateResourceActivity, activities.CompensateResourcesActivity} {
		if !r.names[name] {
			t.Errorf("a queue's worker does not serve %s", name)
		}
	}
	for _, name := range []string{activities.CreateReleaseActivity, activities.FinishReleaseActivity, activities.PlanPageActivity} {
		if r.names[name] {
			t.Errorf("a queue's worker serves %s", name)
		}
	}
}
