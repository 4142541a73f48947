package engine

import (
	"fmt"
	"testing"

	"github.com/kumoproj/kumo/engine/dag"
)

// ancestors returns every resource id must wait for, directly or not.
func ancestors(g *dag.Graph[string], id string) map[string]bool {
	out := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		for _, d := range g.DependenciesOf(n) {
			if !out[d] {
				out[d] = true
				walk(d)
			}
		}
	}
	walk(id)
	return out
}

// manyObjects is a manifest of n ConfigMaps and n Deployments in one namespace.
func manyObjects(n int) []ManifestObject {
	objs := []ManifestObject{{Where: "ns", Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "big"}}}}
	for i := range n {
		objs = append(objs,
			ManifestObject{Where: fmt.Sprint("cm", i), Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprint("c", i)}}},
			ManifestObject{Where: fmt.Sprint("dep", i), Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": fmt.Sprint("d", i)}}})
	}
	return objs
}

// The kind order costs dependsOn entries linear in the number of objects, and
// still every workload waits for every ConfigMap.
func TestManifestSpecOrderIsLinear(t *testing.T) {
	const n = 300
	spec, err := ManifestSpec(manyObjects(n), "big")
	if err != nil {
		t.Fatal(err)
	}
	edges := 0
	for _, r := range spec.Resources {
		edges += len(r.DependsOn)
	}
	if edges > 2*len(spec.Resources) {
		t.Errorf("%d dependsOn entries for %d objects, want at most twice as many", edges, len(spec.Resources))
	}
	g, err := spec.Graph()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range []string{"apps/v1:Deployment:big:d0", "apps/v1:Deployment:big:d150", fmt.Sprintf("apps/v1:Deployment:big:d%d", n-1)} {
		anc := ancestors(g, dep)
		for i := range n {
			if id := fmt.Sprintf("v1:ConfigMap:big:c%d", i); !anc[id] {
				t.Fatalf("%s does not wait for %s", dep, id)
			}
		}
		if !anc["v1:Namespace:big"] {
			t.Fatalf("%s does not wait for the namespace", dep)
		}
	}
}

// BenchmarkManifestSpec converts 1000 ConfigMaps and 1000 Deployments.
func BenchmarkManifestSpec(b *testing.B) {
	objs := manyObjects(1000)
	for b.Loop() {
		if _, err := ManifestSpec(objs, "big"); err != nil {
			b.Fatal(err)
		}
	}
}
