package workflows

import (
	"context"
	"slices"
	"sync"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
)

// TestKubernetesNodeStepsAreLocal: a Kubernetes apply and the delete of a
// ConfigMap run as local activities; the delete of a Namespace, which waits
// for its finalization, stays a regular (heartbeating) activity.
func TestKubernetesNodeStepsAreLocal(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	steps := map[string][]string{} // "local"/"regular" -> "<activity> <node>"
	h.setup = func(env *testsuite.TestWorkflowEnvironment) {
		env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, args []any) {
			if in, ok := args[0].(activities.NodeInput); ok && info.ActivityType.Name != activities.PreviewResourceActivity {
				mu.Lock()
				steps["local"] = append(steps["local"], info.ActivityType.Name+" "+in.ID)
				mu.Unlock()
			}
		})
		env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
			var in activities.NodeInput
			if info.ActivityType.Name == activities.ApplyResourceActivity || info.ActivityType.Name == activities.DeleteResourceActivity {
				if err := args.Get(&in); err != nil {
					t.Error(err)
				}
				mu.Lock()
				steps["regular"] = append(steps["regular"], info.ActivityType.Name+" "+in.ID)
				mu.Unlock()
			}
		})
	}
	ns := engine.Resource{ID: "v1:Namespace:ns", Type: engine.Kubernetes,
		Attributes: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "ns"}}}
	spec := &engine.Spec{Resources: []engine.Resource{ns, cm("a", ns.ID)}}
	if _, err := h.run(Apply, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := h.run(Destroy, nil); err != nil {
		t.Fatal(err)
	}
	slices.Sort(steps["local"])
	want := []string{"ApplyResource v1:ConfigMap:ns:a", "ApplyResource v1:Namespace:ns", "DeleteResource v1:ConfigMap:ns:a"}
	if !slices.Equal(steps["local"], want) {
		t.Errorf("local steps = %q, want %q", steps["local"], want)
	}
	if want := []string{"DeleteResource v1:Namespace:ns"}; !slices.Equal(steps["regular"], want) {
		t.Errorf("regular steps = %q, want %q", steps["regular"], want)
	}
}
