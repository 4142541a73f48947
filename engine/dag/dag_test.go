package dag

import (
	"errors"
	"slices"
	"testing"
)

func TestTopoSortDeterministic(t *testing.T) {
	g := New[string]()
	// c and b have no dependencies; a depends on both; d depends on a.
	g.AddNode("c")
	g.AddEdge("b", "a")
	g.AddEdge("c", "a")
	g.AddEdge("a", "d")
	g.AddNode("e")
	for range 20 { // map iteration is random; the order must not be
		got, err := g.TopoSort()
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"b", "c", "a", "d", "e"}
		if !slices.Equal(got, want) {
			t.Fatalf("TopoSort = %v, want %v", got, want)
		}
	}
}

func TestTopoSortRespectsEdges(t *testing.T) {
	g := New[int]()
	for i := 0; i < 50; i++ {
		g.AddEdge(i+1, i) // each i depends on i+1: 50 first, 0 last
	}
	got, err := g.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 50 || got[50] != 0 {
		t.Fatalf("TopoSort = %v", got)
	}
}

func TestNodesAndNeighbours(t *testing.T) {
	g := New[string]()
	g.AddEdge("ns", "svc")
	g.AddEdge("ns", "deploy")
	g.AddEdge("cfg", "deploy")
	g.AddEdge("cfg", "deploy") // duplicate edge is one edge
	if got := g.Nodes(); !slices.Equal(got, []string{"cfg", "deploy", "ns", "svc"}) {
		t.Errorf("Nodes = %v", got)
	}
	if got := g.DependenciesOf("deploy"); !slices.Equal(got, []string{"cfg", "ns"}) {
		t.Errorf("DependenciesOf(deploy) = %v", got)
	}
	if got := g.DependentsOf("ns"); !slices.Equal(got, []string{"deploy", "svc"}) {
		t.Errorf("DependentsOf(ns) = %v", got)
	}
	if got := g.DependenciesOf("ns"); len(got) != 0 {
		t.Errorf("DependenciesOf(ns) = %v", got)
	}
	if !g.HasNode("svc") || g.HasNode("nope") || g.Len() != 4 {
		t.Errorf("HasNode/Len wrong")
	}
}

func TestReverse(t *testing.T) {
	g := New[string]()
	g.AddEdge("ns", "deploy")
	g.AddEdge("deploy", "hpa")
	g.AddNode("lonely")
	r := g.Reverse()
	got, err := r.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"hpa", "deploy", "lonely", "ns"}; !slices.Equal(got, want) {
		t.Fatalf("reverse TopoSort = %v, want %v", got, want)
	}
	if got := r.DependenciesOf("ns"); !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("reverse DependenciesOf(ns) = %v", got)
	}
	// The original is untouched.
	if got := g.DependenciesOf("ns"); len(got) != 0 {
		t.Errorf("original changed: %v", got)
	}
}

func TestCycle(t *testing.T) {
	g := New[string]()
	// z depends on a, a depends on b, b depends on c, c depends on a.
	g.AddEdge("a", "z")
	g.AddEdge("b", "a")
	g.AddEdge("c", "b")
	g.AddEdge("a", "c")
	g.AddNode("free")
	_, err := g.TopoSort()
	var ce *CycleError[string]
	if !errors.As(err, &ce) {
		t.Fatalf("TopoSort error = %v, want *CycleError", err)
	}
	if want := []string{"a", "b", "c", "a"}; !slices.Equal(ce.Cycle, want) {
		t.Errorf("Cycle = %v, want %v", ce.Cycle, want)
	}
	if want := "dependency cycle: a -> b -> c -> a"; err.Error() != want {
		t.Errorf("Error = %q, want %q", err.Error(), want)
	}
}

func TestCycleEnteredFromOutside(t *testing.T) {
	g := New[string]()
	// a depends on m; m and n depend on each other. The walk starts at a (smallest
	// blocked key) but a is not on the cycle.
	g.AddEdge("m", "a")
	g.AddEdge("n", "m")
	g.AddEdge("m", "n")
	_, err := g.TopoSort()
	var ce *CycleError[string]
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v", err)
	}
	if want := []string{"m", "n", "m"}; !slices.Equal(ce.Cycle, want) {
		t.Errorf("Cycle = %v, want %v", ce.Cycle, want)
	}
}

func TestSelfEdge(t *testing.T) {
	g := New[string]()
	g.AddEdge("x", "x")
	_, err := g.TopoSort()
	if err == nil || err.Error() != "dependency cycle: x -> x" {
		t.Fatalf("error = %v", err)
	}
}
