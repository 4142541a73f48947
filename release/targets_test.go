package release

import (
	"slices"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/resid"
)

// chain: ns <- cfg <- web (web depends on cfg, cfg on ns); api depends on ns;
// old is a delete node that gone depends on (gone is deleted first).
func chainPlan() Plan {
	return Plan{Nodes: []PlanNode{
		{ID: "v1:Namespace:demo", Type: engine.Kubernetes},
		{ID: "v1:ConfigMap:demo:cfg", Type: engine.Kubernetes, Deps: []int32{0}},
		{ID: "apps/v1:Deployment:demo:web", Type: engine.Kubernetes, Deps: []int32{1}, Refs: []int32{1}},
		{ID: "apps/v1:Deployment:demo:api", Type: engine.Kubernetes, Deps: []int32{0}},
		{ID: "v1:Secret:demo:gone", Type: engine.Kubernetes, Delete: true},
		{ID: "v1:ConfigMap:demo:old", Type: engine.Kubernetes, Delete: true, Deps: []int32{4}},
	}}
}

func ids(p Plan) []string {
	var out []string
	for _, n := range p.Nodes {
		out = append(out, n.ID)
	}
	return out
}

func mustTargets(t *testing.T, addrs ...string) []resid.Target {
	t.Helper()
	ts, err := ParseTargets(JoinTargets(addrs))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestNarrowPullsInDependencies(t *testing.T) {
	got, err := narrow(chainPlan(), mustTargets(t, "Deployment/web"), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"v1:Namespace:demo", "v1:ConfigMap:demo:cfg", "apps/v1:Deployment:demo:web"}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("kept %v, want %v", ids(got), want)
	}
	if web := got.Nodes[2]; !slices.Equal(web.Deps, []int32{1}) || !slices.Equal(web.Refs, []int32{1}) {
		t.Fatalf("web renumbered to deps %v refs %v", web.Deps, web.Refs)
	}
}

func TestNarrowWithDependents(t *testing.T) {
	got, err := narrow(chainPlan(), mustTargets(t, "v1:ConfigMap:demo:cfg"), true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"v1:Namespace:demo", "v1:ConfigMap:demo:cfg", "apps/v1:Deployment:demo:web"}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("kept %v, want %v", ids(got), want)
	}
	without, _ := narrow(chainPlan(), mustTargets(t, "v1:ConfigMap:demo:cfg"), false)
	if slices.Contains(ids(without), "apps/v1:Deployment:demo:web") {
		t.Fatal("a dependent kept without --target-dependents")
	}
}

func TestNarrowDeleteTakesWhatDependsOnIt(t *testing.T) {
	got, err := narrow(chainPlan(), mustTargets(t, "v1:ConfigMap:demo:old"), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"v1:Secret:demo:gone", "v1:ConfigMap:demo:old"}; !slices.Equal(ids(got), want) {
		t.Fatalf("kept %v, want %v", ids(got), want)
	}
}

func TestNarrowRefusesATargetMatchingNothing(t *testing.T) {
	_, err := narrow(chainPlan(), mustTargets(t, "Deployment/web", "Service/nope"), false)
	if err == nil || !strings.Contains(err.Error(), "--target Service/nope") || strings.Contains(err.Error(), "Deployment/web") {
		t.Fatalf("got %v, want an error naming only Service/nope", err)
	}
}

func TestCheckDeletesRefusesProtected(t *testing.T) {
	protected := engine.Resource{ID: "v1:Secret:demo:gone", Type: engine.Kubernetes, Attributes: map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{engine.DeletePolicyAnnotation: "protect"}}}}
	recorded := map[string]engine.Resource{protected.ID: protected}
	spec := newSpecIndex(&engine.Spec{})
	err := checkDeletes(chainPlan(), recorded, spec, "destroy", false)
	if err == nil || !strings.Contains(err.Error(), "v1:Secret:demo:gone") || !strings.Contains(err.Error(), "destroy") || !FailedForGood(err) {
		t.Fatalf("got %v, want a permanent error naming the resource", err)
	}
	if err := checkDeletes(chainPlan(), recorded, spec, "destroy", true); err != nil {
		t.Fatalf("allowed: %v", err)
	}
}
