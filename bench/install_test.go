package main

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kumoproj/kumo/engine/chart"
	"github.com/kumoproj/kumo/engine/input"
)

// TestInstallChartRenders: the realistic install's chart renders, as kumo
// renders it, to its CRD first and five objects per app, the changed
// version changing every app's Pod template.
func TestInstallChartRenders(t *testing.T) {
	path, err := installChart(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	templates := map[string]string{}
	for _, version := range []string{"1", "2"} {
		r, err := chart.Render(chart.Options{Chart: path, Set: []string{"version=" + version}, ReleaseName: "shop", Namespace: "x", Capabilities: chart.Capabilities{KubeVersion: "v1.36.3"}})
		if err != nil {
			t.Fatal(err)
		}
		spec, _, err := input.ReadInputs([]input.File{{Name: "chart", Data: []byte(r.Manifest)}}, "x")
		if err != nil {
			t.Fatal(err)
		}
		if len(spec.Resources) != 4+5*installApps {
			t.Fatalf("version %s: %d objects, want %d", version, len(spec.Resources), 4+5*installApps)
		}
		clear(kinds)
		for _, res := range spec.Resources {
			u := unstructured.Unstructured{Object: res.Attributes}
			kinds[u.GetKind()]++
			if u.GetKind() == "Deployment" && u.GetName() == "app-3" {
				v, _, _ := unstructured.NestedString(u.Object, "spec", "template", "metadata", "annotations", "bench.kumo.dev/version")
				if templates[v] != "" {
					t.Errorf("version %s rendered twice", v)
				}
				templates[v] = version
			}
		}
	}
	if kinds["CustomResourceDefinition"] != 1 || kinds["Deployment"] != installApps || kinds["Widget"] != installApps || kinds["Secret"] != installApps {
		t.Errorf("kinds %v", kinds)
	}
	if templates["1"] != "1" || templates["2"] != "2" {
		t.Errorf("the changed upgrade does not change the Pod template: %v", templates)
	}
}

func TestRolledOut(t *testing.T) {
	dep := func(gen, observed, replicas, updated, available, total int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"spec":   map[string]any{"replicas": replicas},
			"status": map[string]any{"observedGeneration": observed, "updatedReplicas": updated, "availableReplicas": available, "replicas": total},
		}}
		u.SetGeneration(gen)
		return u
	}
	for _, c := range []struct {
		name string
		u    *unstructured.Unstructured
		want bool
	}{
		{"available", dep(2, 2, 2, 2, 2, 2), true},
		{"not yet observed", dep(3, 2, 2, 2, 2, 2), false},
		{"rolling: an old replica left", dep(2, 2, 2, 2, 2, 3), false},
		{"not available", dep(2, 2, 2, 2, 1, 2), false},
		{"not updated", dep(2, 2, 2, 1, 2, 2), false},
	} {
		if got := rolledOut(c.u); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	crd := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "NamesAccepted", "status": "True"}, map[string]any{"type": "Established", "status": "False"},
	}}}}
	if condition(crd, "Established") || !condition(crd, "NamesAccepted") {
		t.Error("condition misread")
	}
}
