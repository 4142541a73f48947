package release

import (
	"fmt"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/dag"
)

func manifestObj(apiVersion, kind, name, wave string) engine.ManifestObject {
	meta := map[string]any{"name": name}
	if wave != "" {
		meta["annotations"] = map[string]any{engine.AnnotationSyncWave: wave}
	}
	return engine.ManifestObject{Where: "m.yaml:" + name, Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}}
}

// removalRounds returns, for each resource of g, the round of a walk with no
// bound on parallelism in which its delete starts (1: at once), and how many
// rounds there are.
func removalRounds(t *testing.T, g *dag.Graph[string]) (map[string]int, int) {
	t.Helper()
	order, err := g.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	round, most := map[string]int{}, 0
	for _, id := range order {
		r := 1
		for _, d := range g.DependenciesOf(id) {
			r = max(r, round[d]+1)
		}
		round[id], most = r, max(most, r)
	}
	return round, most
}

// goesAfter reports whether x's delete waits, directly or not, for y's.
func goesAfter(g *dag.Graph[string], x, y string) bool {
	seen := map[string]bool{}
	var visit func(string) bool
	visit = func(n string) bool {
		for _, d := range g.DependenciesOf(n) {
			if d == y || !seen[d] && visit(d) {
				return true
			}
			seen[d] = true
		}
		return false
	}
	return visit(x)
}

func tierSpec(t *testing.T, objs ...engine.ManifestObject) []engine.Resource {
	t.Helper()
	spec, err := engine.ManifestSpec(objs, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec.Resources
}

// A manifest set's destroy takes each delete stage in one round, the last
// applied first, each wholly gone before the one before it starts: a later
// wave, the custom resources, the workloads with what they use, the CRDs,
// the Namespace.
func TestRemovalGraphTakesAStageInOneRound(t *testing.T) {
	res := tierSpec(t,
		manifestObj("v1", "Namespace", "demo", ""),
		manifestObj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com", ""),
		manifestObj("v1", "ServiceAccount", "sa1", ""), manifestObj("v1", "ServiceAccount", "sa2", ""),
		manifestObj("v1", "Service", "svc1", ""), manifestObj("v1", "Service", "svc2", ""), manifestObj("v1", "Service", "svc3", ""),
		manifestObj("apps/v1", "Deployment", "d1", ""), manifestObj("apps/v1", "Deployment", "d2", ""),
		manifestObj("example.com/v1", "Widget", "w1", ""), manifestObj("example.com/v1", "Widget", "w2", ""),
		manifestObj("v1", "ConfigMap", "late1", "1"), manifestObj("v1", "ConfigMap", "late2", "1"), manifestObj("v1", "ConfigMap", "late3", "1"),
	)
	g, _, err := removalGraph(res)
	if err != nil {
		t.Fatal(err)
	}
	round, rounds := removalRounds(t, g)
	stages := [][]string{
		{"v1:ConfigMap:demo:late1", "v1:ConfigMap:demo:late2", "v1:ConfigMap:demo:late3"},
		{"example.com/v1:Widget:demo:w1", "example.com/v1:Widget:demo:w2"},
		{"apps/v1:Deployment:demo:d1", "apps/v1:Deployment:demo:d2", "v1:Service:demo:svc1", "v1:Service:demo:svc2", "v1:Service:demo:svc3",
			"v1:ServiceAccount:demo:sa1", "v1:ServiceAccount:demo:sa2"},
		{"apiextensions.k8s.io/v1:CustomResourceDefinition:widgets.example.com"},
		{"v1:Namespace:demo"},
	}
	if rounds != len(stages) {
		t.Errorf("%d rounds (%v), want one per stage: %d", rounds, round, len(stages))
	}
	for i, stage := range stages {
		for _, id := range stage {
			if round[id] != i+1 {
				t.Errorf("%s is deleted in round %d, want %d with the rest of its stage", id, round[id], i+1)
			}
			if i == 0 {
				continue
			}
			for _, later := range stages[i-1] {
				if !goesAfter(g, id, later) {
					t.Errorf("%s does not wait for %s, of the stage after it", id, later)
				}
			}
		}
	}
	// Followed as recorded, each tier of several is two rounds (its gate,
	// then the rest), a later wave's first tier three (its gate, the rest,
	// the wave's first object).
	plain := make([][]int, len(res))
	index := map[string]int{}
	for i, r := range res {
		index[r.ID] = i
	}
	for y, r := range res {
		for _, d := range r.DependsOn {
			plain[index[d]] = append(plain[index[d]], y)
		}
	}
	if _, n := removalRounds(t, graphOf(res, plain)); n != 13 {
		t.Errorf("recorded edges give %d rounds, want 13 (the test's premise)", n)
	}
}

// Joining keeps to the recorded edges when the joined graph would pass its
// budget, when a group has an edge inside it that is not only the apply's
// order, and when joining would make a cycle.
func TestRemovalGraphKeepsRecordedEdges(t *testing.T) {
	index := map[string]int{}
	after := func(res []engine.Resource) [][]int {
		index = map[string]int{}
		for i, r := range res {
			index[r.ID] = i
		}
		out := make([][]int, len(res))
		for y, r := range res {
			for _, d := range r.DependsOn {
				out[index[d]] = append(out[index[d]], y)
			}
		}
		return out
	}
	twoTiers := func(n int) []engine.Resource {
		var objs []engine.ManifestObject
		for i := range n {
			objs = append(objs, manifestObj("v1", "ServiceAccount", fmt.Sprintf("sa%03d", i), ""))
		}
		for i := range n {
			objs = append(objs, manifestObj("example.com/v1", "Widget", fmt.Sprintf("w%03d", i), ""))
		}
		return tierSpec(t, objs...)
	}
	for _, c := range []struct{ n, rounds int }{{20, 2}, {100, 4}} {
		res := twoTiers(c.n)
		g, _, err := removalGraph(res)
		if err != nil {
			t.Fatal(err)
		}
		if _, got := removalRounds(t, g); got != c.rounds {
			t.Errorf("two tiers of %d (%d edges joined, budget %d): %d rounds, want %d", c.n, c.n*c.n, removalEdgeBudget(2*c.n, 3*(c.n-1)), got, c.rounds)
		}
	}
	res := twoTiers(20)
	a := after(res)
	if joinDeleteWith(res, index, a, 400) == nil {
		t.Error("two tiers of 20 not joined within a budget of 400 edges")
	}
	if joinDeleteWith(res, index, a, 399) != nil {
		t.Error("joined past the budget")
	}

	// A dependency inside a tier that is not only the apply's order.
	res = tierSpec(t, manifestObj("v1", "Service", "a", ""), manifestObj("v1", "Service", "b", ""), manifestObj("v1", "Service", "c", ""))
	res[1].DependsOn = append(res[1].DependsOn, res[0].ID)
	if a := after(res); joinDeleteWith(res, index, a, 1024) != nil {
		t.Error("joined a tier with a dependency the extension does not name")
	}
	g, _, err := removalGraph(res)
	if err != nil {
		t.Fatal(err)
	}
	if !goesAfter(g, res[0].ID, res[1].ID) {
		t.Error("a kept dependency inside a tier is not followed")
	}

	// A cycle once joined: x and y are named together, and z sits between them.
	x := engine.Resource{ID: "v1:ConfigMap:demo:x", Type: engine.Kubernetes}
	z := engine.Resource{ID: "v1:ConfigMap:demo:z", Type: engine.Kubernetes, DependsOn: []string{x.ID}}
	y := engine.Resource{ID: "v1:ConfigMap:demo:y", Type: engine.Kubernetes, DependsOn: []string{x.ID, z.ID},
		Extensions: map[string]any{engine.ExtAfterApplied: []any{x.ID}, engine.ExtDeleteWith: []any{x.ID}}}
	g, _, err = removalGraph([]engine.Resource{x, z, y})
	if err != nil {
		t.Fatal(err)
	}
	if !goesAfter(g, x.ID, z.ID) || !goesAfter(g, z.ID, y.ID) {
		t.Errorf("a group that would make a cycle: want the recorded order y, z, x; got x after %v, z after %v", g.DependenciesOf(x.ID), g.DependenciesOf(z.ID))
	}
}
