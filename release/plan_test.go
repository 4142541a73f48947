package release_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

func TestPlanGraph(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, _ := withRuntime(b)
		a, x := ns("a"), cm("x", "1")
		spec := putSpec(t, b, x, a)
		in := release.PlanInput{Project: "p", Workspace: "w", SpecHash: spec}
		p, err := m.PlanGraph(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		want := release.Plan{Nodes: []release.PlanNode{{ID: a.ID, Type: engine.Kubernetes}, {ID: x.ID, Type: engine.Kubernetes, Deps: []int32{0}}}}
		if !reflect.DeepEqual(p, want) {
			t.Fatalf("plan %+v, want %+v", p, want)
		}
		if again, err := m.PlanGraph(ctx, in); err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("second PlanGraph = %+v, %v", again, err)
		}
		// A dependency on a resource the spec lacks is invalid, for good.
		in.SpecHash = putSpec(t, b, x)
		if _, err := m.PlanGraph(ctx, in); !errors.Is(err, release.ErrInvalid) {
			t.Fatalf("PlanGraph of a spec with a missing dependency: %v, want ErrInvalid", err)
		}
	})
}

// The dependencies a resource needs only applied (engine.ExtAfterApplied)
// are marked in its node, and round-trip the stored spec.
func TestPlanGraphAppliedDeps(t *testing.T) {
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := withRuntime(b)
	a, x, y := ns("a"), cm("x", "1"), cm("y", "2")
	y.DependsOn = []string{a.ID, x.ID}
	y.Extensions = map[string]any{engine.ExtAfterApplied: []any{x.ID}}
	p, err := m.PlanGraph(ctx, release.PlanInput{Project: "p", Workspace: "w", SpecHash: putSpec(t, b, a, x, y)})
	if err != nil {
		t.Fatal(err)
	}
	want := release.Plan{Nodes: []release.PlanNode{
		{ID: a.ID, Type: engine.Kubernetes},
		{ID: x.ID, Type: engine.Kubernetes, Deps: []int32{0}},
		{ID: y.ID, Type: engine.Kubernetes, Deps: []int32{1, 0}, Applied: []int32{1}},
	}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("plan %+v, want %+v", p, want)
	}
}
