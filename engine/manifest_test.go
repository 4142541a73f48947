package engine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine/dag"
)

func readInput(t testing.TB, name string) Input {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Input{Name: name, Data: data}
}

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

func TestReadInputsInstallManifest(t *testing.T) {
	spec, manifests, err := ReadInputs([]Input{readInput(t, "manifests/install.yaml")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !manifests {
		t.Fatal("manifests = false for plain Kubernetes objects")
	}
	var ids []string
	for _, r := range spec.Resources {
		ids = append(ids, r.ID)
	}
	want := []string{
		"v1:Namespace:widget-system",
		"apiextensions.k8s.io/v1:CustomResourceDefinition:widgets.example.com",
		"v1:ServiceAccount:widget-system:widget-operator",
		"v1:ConfigMap:widget-system:widget-operator-config",
		"rbac.authorization.k8s.io/v1:ClusterRole:widget-operator",
		"rbac.authorization.k8s.io/v1:Role:widget-system:leader-election",
		"rbac.authorization.k8s.io/v1:ClusterRoleBinding:widget-operator",
		"rbac.authorization.k8s.io/v1:RoleBinding:widget-system:leader-election",
		"v1:Service:widget-system:widget-operator",
		"apps/v1:Deployment:widget-system:widget-operator",
		"example.com/v1:Widget:widget-system:sample",
		"admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration:widgets-validator",
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids =\n%s\nwant\n%s", strings.Join(ids, "\n"), strings.Join(want, "\n"))
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := spec.Graph()
	if err != nil {
		t.Fatal(err)
	}
	before := func(a, b string) {
		t.Helper()
		if !ancestors(g, b)[a] {
			t.Errorf("%s does not wait for %s", b, a)
		}
	}
	for _, id := range want[1:] {
		before(want[0], id) // the namespace first
	}
	before("apiextensions.k8s.io/v1:CustomResourceDefinition:widgets.example.com", "example.com/v1:Widget:widget-system:sample")
	before("rbac.authorization.k8s.io/v1:Role:widget-system:leader-election", "rbac.authorization.k8s.io/v1:RoleBinding:widget-system:leader-election")
	before("rbac.authorization.k8s.io/v1:ClusterRole:widget-operator", "rbac.authorization.k8s.io/v1:ClusterRoleBinding:widget-operator")
	before("v1:ServiceAccount:widget-system:widget-operator", "apps/v1:Deployment:widget-system:widget-operator")
	before("v1:Service:widget-system:widget-operator", "apps/v1:Deployment:widget-system:widget-operator")
	for _, id := range want[:len(want)-1] {
		before(id, want[len(want)-1]) // the webhook last
	}
	// Kusion's GVK extension, core group with a leading slash.
	if got := spec.Resources[0].Extensions[ExtGVK]; got != "/v1, Kind=Namespace" {
		t.Errorf("GVK of the namespace = %v", got)
	}
	// The ConfigMap's "---" inside a block scalar is data, not a separator.
	if got := spec.Resources[3].Attributes["data"].(map[string]any)["config.yaml"]; got != "---\nleaderElection: true\n" {
		t.Errorf("config.yaml = %q", got)
	}
}

func TestReadInputsNamespaceAndLists(t *testing.T) {
	spec, _, err := ReadInputs([]Input{readInput(t, "manifests/install.yaml"), readInput(t, "manifests/nested/app-list.json")}, "team")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range spec.Resources {
		got[r.ID] = true
	}
	for _, id := range []string{"v1:ConfigMap:team:app-settings", "apps/v1:Deployment:team:app", "v1:Namespace:widget-system", "v1:ServiceAccount:widget-system:widget-operator"} {
		if !got[id] {
			t.Errorf("no resource %s among %v", id, got)
		}
	}
	for _, r := range spec.Resources {
		if r.ID == "v1:ConfigMap:team:app-settings" && r.Attributes["metadata"].(map[string]any)["namespace"] != "team" {
			t.Errorf("namespace not set in the object: %v", r.Attributes["metadata"])
		}
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestReadInputsErrors(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	for _, tc := range []struct {
		name   string
		inputs []Input
		want   []string
	}{
		{"same object twice", []Input{{"a.yaml", []byte(cm)}, {"b.yaml", []byte("# again\n---\n" + cm)}},
			[]string{"a.yaml: document 1 (line 1) and b.yaml: document 1 (line 3) are the same object (ConfigMap default/a)"}},
		{"same object, other version, namespace explicit", []Input{{"a.yaml", []byte(
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\n---\napiVersion: apps/v1beta2\nkind: Deployment\nmetadata: {name: w, namespace: default}\n")}},
			[]string{"a.yaml: document 1 (line 1) and a.yaml: document 2 (line 5) are the same object (Deployment default/w)"}},
		{"cluster-scoped with and without namespace", []Input{{"a.yaml", []byte(
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r, namespace: x}\n")}},
			[]string{"are the same object (ClusterRole r)"}},
		{"spec and manifest", []Input{{"s.yaml", []byte("resources: []\n")}, {"m.yaml", []byte(cm)}},
			[]string{"s.yaml: document 1 (line 1) is a Spec but m.yaml: document 1 (line 1) is a Kubernetes object"}},
		{"two specs", []Input{{"s.yaml", []byte("resources: []\n---\nresources: []\n")}},
			[]string{"s.yaml: document 1 (line 1) and s.yaml: document 2 (line 3) are both Specs"}},
		{"neither", []Input{{"x.yaml", []byte("foo: 1\n")}}, []string{"x.yaml: document 1 (line 1): neither a Kubernetes object"}},
		{"nothing", []Input{{"x.yaml", []byte("# nothing\n---\n")}, {"y.yaml", nil}}, []string{"x.yaml, y.yaml: no Kubernetes objects and no Spec"}},
		{"no name", []Input{{"x.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n---\napiVersion: v1\nkind: Secret\n")}},
			[]string{"x.yaml: document 1 (line 1): ConfigMap with metadata.generateName and no name", "x.yaml: document 2 (line 5): kubernetes object without metadata.name"}},
		{"bad yaml, line in the file", []Input{{"x.yaml", []byte(cm + "---\n\napiVersion: v1\nkind: [\n")}}, []string{"x.yaml: yaml: line 8"}},
		{"bad list item", []Input{{"l.json", []byte(`{"apiVersion":"v1","kind":"List","items":[1]}`)}}, []string{"l.json: document 1 (line 1), items[0]: not an object"}},
		{"bad json, second value", []Input{{"l.json", []byte("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"a\"}}\n{\"kind\": }")}}, []string{"l.json: line 2: invalid character"}},
		{"two values in one document", []Input{{"x.yaml", []byte("---\n{apiVersion: v1, kind: Namespace, metadata: {name: a}}\n{apiVersion: v1, kind: Namespace, metadata: {name: b}}\n")}},
			[]string{"x.yaml: line 2: more than one value in one document"}},
		{"unknown spec field", []Input{{"s.yaml", []byte("resources: []\nsecretstore: {}\n")}}, []string{`s.yaml: unknown field "secretstore"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadInputs(tc.inputs, "")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
		})
	}
}

// A JSON stream of objects, as `kubectl get -o json` pipes concatenate them.
func TestReadInputsJSONStream(t *testing.T) {
	in := Input{"-", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"a"},"data":{"n":"1"}}`)}
	spec, manifests, err := ReadInputs([]Input{in}, "")
	if err != nil || !manifests {
		t.Fatal(manifests, err)
	}
	if len(spec.Resources) != 2 || spec.Resources[1].ID != "v1:ConfigMap:a:c" || !slices.Equal(spec.Resources[1].DependsOn, []string{"v1:Namespace:a"}) {
		t.Fatalf("spec = %+v", spec.Resources)
	}
	// JSON documents separated by YAML's "---".
	in.Data = bytes.Replace(in.Data, []byte("}\n{"), []byte("}\n---\n{"), 1)
	if spec, _, err := ReadInputs([]Input{in}, ""); err != nil || len(spec.Resources) != 2 {
		t.Fatalf("JSON documents between ---: %v", err)
	}
}

func TestReadInputsSpec(t *testing.T) {
	spec, manifests, err := ReadInputs([]Input{readInput(t, "kusion-kubernetes.yaml")}, "ignored")
	if err != nil || manifests {
		t.Fatal(manifests, err)
	}
	if len(spec.Resources) != 5 || spec.Context["owner"] != "platform-team" {
		t.Fatalf("spec = %+v", spec)
	}
}

// Reading only the first document of a multi-document Spec file would drop the
// rest silently; it is an error instead.
func TestParseSpecRefusesSeveralDocuments(t *testing.T) {
	_, err := ParseSpec([]byte("resources: []\n---\n# second\nresources:\n- id: x\n"), "spec.yaml")
	if err == nil || !strings.Contains(err.Error(), "spec.yaml: 2 documents (the second at line 4); a Spec is one document") {
		t.Fatalf("err = %v", err)
	}
	if _, err := ParseSpec([]byte("---\nresources: []\n---\n"), "spec.yaml"); err != nil {
		t.Fatalf("a Spec between markers: %v", err)
	}
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
