package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine/dag"
)

func TestSpecGraph(t *testing.T) {
	s := refSpec()
	s.Resources = append(s.Resources, Resource{ID: "v1:Namespace:demo", Type: Kubernetes})
	s.Resources[0].DependsOn = []string{"v1:Namespace:demo"}
	g, err := s.Graph()
	if err != nil {
		t.Fatal(err)
	}
	deps := g.DependenciesOf("apps/v1:Deployment:demo:web")
	if want := []string{"hashicorp:random:random_password:db", "v1:Service:demo:web", "v1:Service:demo:web.v1"}; !slices.Equal(deps, want) {
		t.Errorf("deployment depends on %v, want %v", deps, want)
	}
	order, err := g.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	pos := func(id string) int { return slices.Index(order, id) }
	if !(pos("v1:Namespace:demo") < pos("v1:Service:demo:web") && pos("v1:Service:demo:web") < pos("apps/v1:Deployment:demo:web")) {
		t.Errorf("order %v", order)
	}
}

func TestSpecGraphErrors(t *testing.T) {
	s := &Spec{Resources: []Resource{
		{ID: "a", Type: Terraform, DependsOn: []string{"b"}},
		{ID: "b", Type: Terraform, Attributes: map[string]any{"x": "$kumo_path.a.out"}},
	}}
	_, err := s.Graph()
	var ce *dag.CycleError[string]
	if !errors.As(err, &ce) || err.Error() != "dependency cycle: a -> b -> a" {
		t.Errorf("cycle error = %v", err)
	}
	s.Resources[1].DependsOn = []string{"ghost"}
	s.Resources[1].Attributes = nil
	_, err = s.Graph()
	if err == nil || !strings.Contains(err.Error(), `resources[1] ("b"): dependsOn names unknown resource "ghost"`) {
		t.Errorf("unknown dependency error = %v", err)
	}
}
