package main

import (
	"strings"
	"testing"
	"time"

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

// TestInstallRowIsMediansOfItsRuns: the install row reports, per operation,
// the median of the floor's and of kumo's runs (each operation on its own:
// a run slow to delete need not be slow to apply) and says how many ran.
func TestInstallRowIsMediansOfItsRuns(t *testing.T) {
	ms := func(v ...int) opTimes {
		var t opTimes
		for i, x := range v {
			t[i] = time.Duration(x) * time.Millisecond
		}
		return t
	}
	kumo := medianOps([]opTimes{ms(2000, 100, 7400, 8100, 900), ms(1900, 90, 7300, 8200, 250), ms(2100, 80, 7500, 8000, 270)})
	if want := ms(2000, 90, 7400, 8100, 270); kumo != want {
		t.Fatalf("medians %v, want %v", kumo, want)
	}
	var b strings.Builder
	installTable(&b, []installResult{{floor: ms(1700, 150, 7300, 8200, 150), kumo: kumo, helm: ms(5000, 2000, 9000, 8000, 1000), objects: 54, runs: 3}})
	for _, want := range []string{"ran 3 times each", "| install | kumo | 2.00 (1.2×) | 0.09 (0.6×) | 7.40 (1.0×) | 8.10 (1.0×) | 0.27 (1.8×) |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("install table lacks %q:\n%s", want, b.String())
		}
	}
}
