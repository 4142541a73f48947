package worker

import (
	"testing"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
)

// TestBatchStepsCountEachResource: a batch step, an undo batch included,
// counts as a step of each of its resources, of their runtime.
func TestBatchStepsCountEachResource(t *testing.T) {
	ids := []string{"v1:ConfigMap:ns:a", "v1:ConfigMap:ns:b", "v1:ConfigMap:ns:c"}
	for _, in := range []any{
		activities.BatchInput{IDs: ids},
		activities.CompensateBatchInput{IDs: ids, Actions: []engine.Action{engine.Create, engine.Create, engine.Create}},
	} {
		args := []interface{}{in}
		if n, rt := resourcesOf(args), runtimeOf(args); n != 3 || rt != string(engine.Kubernetes) {
			t.Errorf("%T: %d resources of %s, want 3 of %s", in, n, rt, engine.Kubernetes)
		}
	}
	if _, ok := nodeSteps[activities.CompensateResourcesActivity]; !ok {
		t.Error("CompensateResources is not counted as a node step")
	}
}
