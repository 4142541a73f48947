package input

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/dag"
)

func readInput(t testing.TB, name string) File {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return File{Name: name, Data: data}
}

// waitsFor reports whether id waits for dep in g, directly or not.
func waitsFor(g *dag.Graph[string], id, dep string) bool {
	seen := map[string]bool{}
	for next := []string{id}; len(next) > 0; {
		n := next[len(next)-1]
		next = next[:len(next)-1]
		for _, d := range g.DependenciesOf(n) {
			if d == dep {
				return true
			}
			if !seen[d] {
				seen[d] = true
				next = append(next, d)
			}
		}
	}
	return false
}

func TestReadInputsInstallManifest(t *testing.T) {
	spec, manifests, err := ReadInputs([]File{readInput(t, "manifests/install.yaml")}, "")
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
		if !waitsFor(g, b, a) {
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
	if got := spec.Resources[0].Extensions[engine.ExtGVK]; got != "/v1, Kind=Namespace" {
		t.Errorf("GVK of the namespace = %v", got)
	}
	// The ConfigMap's "---" inside a block scalar is data, not a separator.
	if got := spec.Resources[3].Attributes["data"].(map[string]any)["config.yaml"]; got != "---\nleaderElection: true\n" {
		t.Errorf("config.yaml = %q", got)
	}
}

func TestReadInputsNamespaceAndLists(t *testing.T) {
	spec, _, err := ReadInputs([]File{readInput(t, "manifests/install.yaml"), readInput(t, "manifests/nested/app-list.json")}, "team")
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
		inputs []File
		want   []string
	}{
		{"same object twice", []File{{"a.yaml", []byte(cm)}, {"b.yaml", []byte("# again\n---\n" + cm)}},
			[]string{"a.yaml: document 1 (line 1) and b.yaml: document 1 (line 3) are the same object (ConfigMap default/a)"}},
		{"same object, other version, namespace explicit", []File{{"a.yaml", []byte(
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\n---\napiVersion: apps/v1beta2\nkind: Deployment\nmetadata: {name: w, namespace: default}\n")}},
			[]string{"a.yaml: document 1 (line 1) and a.yaml: document 2 (line 5) are the same object (Deployment default/w)"}},
		{"cluster-scoped with and without namespace", []File{{"a.yaml", []byte(
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r, namespace: x}\n")}},
			[]string{"are the same object (ClusterRole r)"}},
		{"spec and manifest", []File{{"s.yaml", []byte("resources: []\n")}, {"m.yaml", []byte(cm)}},
			[]string{"s.yaml: document 1 (line 1) is a Spec but m.yaml: document 1 (line 1) is a Kubernetes object"}},
		{"two specs", []File{{"s.yaml", []byte("resources: []\n---\nresources: []\n")}},
			[]string{"s.yaml: document 1 (line 1) and s.yaml: document 2 (line 3) are both Specs"}},
		{"neither", []File{{"x.yaml", []byte("foo: 1\n")}}, []string{"x.yaml: document 1 (line 1): neither a Kubernetes object"}},
		{"nothing", []File{{"x.yaml", []byte("# nothing\n---\n")}, {"y.yaml", nil}}, []string{"x.yaml, y.yaml: no Kubernetes objects and no Spec"}},
		{"no name", []File{{"x.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n---\napiVersion: v1\nkind: Secret\n")}},
			[]string{"x.yaml: document 1 (line 1): ConfigMap with metadata.generateName and no name", "x.yaml: document 2 (line 5): kubernetes object without metadata.name"}},
		{"bad yaml, line in the file", []File{{"x.yaml", []byte(cm + "---\n\napiVersion: v1\nkind: [\n")}}, []string{"x.yaml: yaml: line 8"}},
		{"bad list item", []File{{"l.json", []byte(`{"apiVersion":"v1","kind":"List","items":[1]}`)}}, []string{"l.json: document 1 (line 1), items[0]: not an object"}},
		{"bad json, second value", []File{{"l.json", []byte("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"a\"}}\n{\"kind\": }")}}, []string{"l.json: line 2: invalid character"}},
		{"two values in one document", []File{{"x.yaml", []byte("---\n{apiVersion: v1, kind: Namespace, metadata: {name: a}}\n{apiVersion: v1, kind: Namespace, metadata: {name: b}}\n")}},
			[]string{"x.yaml: line 2: more than one value in one document"}},
		{"unknown spec field", []File{{"s.yaml", []byte("resources: []\nsecretstore: {}\n")}}, []string{`s.yaml: unknown field "secretstore"`}},
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
	in := File{"-", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"a"},"data":{"n":"1"}}`)}
	spec, manifests, err := ReadInputs([]File{in}, "")
	if err != nil || !manifests {
		t.Fatal(manifests, err)
	}
	if len(spec.Resources) != 2 || spec.Resources[1].ID != "v1:ConfigMap:a:c" || !slices.Equal(spec.Resources[1].DependsOn, []string{"v1:Namespace:a"}) {
		t.Fatalf("spec = %+v", spec.Resources)
	}
	// JSON documents separated by YAML's "---".
	in.Data = bytes.Replace(in.Data, []byte("}\n{"), []byte("}\n---\n{"), 1)
	if spec, _, err := ReadInputs([]File{in}, ""); err != nil || len(spec.Resources) != 2 {
		t.Fatalf("JSON documents between ---: %v", err)
	}
}

func TestReadInputsSpec(t *testing.T) {
	spec, manifests, err := ReadInputs([]File{readInput(t, "kusion-kubernetes.yaml")}, "ignored")
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
