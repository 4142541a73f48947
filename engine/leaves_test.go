package engine

import (
	"reflect"
	"testing"
)

// TestLeavesNameFieldsAsDiffDoes: a resource listed whole names each value
// with the path Diff gives the same field, so a page can mark a preview's
// changes in it; server-maintained fields are left out and a Secret's values
// masked.
func TestLeavesNameFieldsAsDiffDoes(t *testing.T) {
	before := deployment(t, nil)
	after := deployment(t, func(d map[string]any) {
		spec := d["spec"].(map[string]any)
		spec["replicas"] = 3
		meta := d["metadata"].(map[string]any)
		meta["labels"].(map[string]any)["app.kubernetes.io/name"] = "shop"
	})
	c := Diff(after.ID, Kubernetes, after, before, before)
	paths := map[string]any{}
	for _, l := range Leaves(*after) {
		paths[l.Path] = l.Value
	}
	for _, f := range c.Fields {
		if v, ok := paths[f.Path]; !ok || !reflect.DeepEqual(v, f.After) {
			t.Errorf("changed field %s (after %v): leaves have %v, %v", f.Path, f.After, v, ok)
		}
	}
	if len(c.Fields) != 2 {
		t.Errorf("diff: %+v", c.Fields)
	}
	for _, p := range []string{"metadata.resourceVersion", "metadata.managedFields", "status.replicas", "metadata.uid"} {
		if _, ok := paths[p]; ok {
			t.Errorf("leaf %s is maintained by the server, not listed by Diff", p)
		}
	}
	if got := paths["spec.template.spec.containers[0].image"]; got != "nginx:1.27" {
		t.Errorf("image leaf: %v", got)
	}

	secret := Resource{ID: "v1:Secret:demo:db", Type: Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "demo", "annotations": map[string]any{}},
		"data": map[string]any{"password": "aHVudGVyMg=="}, "stringData": map[string]any{"token": "clear"}, "type": "Opaque", "immutable": []any{},
	}}
	want := []Leaf{
		{"apiVersion", "v1"}, {"data.password", Masked}, {"immutable", []any{}}, {"kind", "Secret"},
		{"metadata.name", "db"}, {"metadata.namespace", "demo"}, {"stringData.token", Masked}, {"type", "Opaque"},
	}
	if got := Leaves(secret); !reflect.DeepEqual(got, want) {
		t.Errorf("secret leaves:\n got %v\nwant %v", got, want)
	}
	if secret.Attributes["data"].(map[string]any)["password"] != "aHVudGVyMg==" {
		t.Error("Leaves changed the resource it was given")
	}
}
