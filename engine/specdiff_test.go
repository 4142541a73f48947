package engine_test

import (
	"reflect"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/input"
)

func TestDiffSpecs(t *testing.T) {
	from, err := input.ParseSpec([]byte(`resources:
- id: v1:ConfigMap:ns:keep
  type: Kubernetes
  attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: keep, namespace: ns}, data: {a: "1"}}
- id: v1:ConfigMap:ns:change
  type: Kubernetes
  attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: change, namespace: ns}, data: {a: "1", b: "2"}}
- id: v1:ConfigMap:ns:gone
  type: Kubernetes
  attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: gone, namespace: ns}}
`), "from.yaml")
	if err != nil {
		t.Fatal(err)
	}
	to, err := input.ParseSpec([]byte(`resources:
- id: v1:ConfigMap:ns:keep
  type: Kubernetes
  attributes: {kind: ConfigMap, data: {a: "1"}, metadata: {namespace: ns, name: keep}, apiVersion: v1}
- id: v1:ConfigMap:ns:change
  type: Kubernetes
  dependsOn: [v1:ConfigMap:ns:keep]
  attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: change, namespace: ns}, data: {a: "9", c: "3"}}
- id: v1:ConfigMap:ns:new
  type: Kubernetes
  attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: new, namespace: ns}}
`), "to.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := engine.DiffSpecs(from, to)
	want := []engine.SpecChange{
		{ID: "v1:ConfigMap:ns:change", Kind: engine.Changed, Fields: []engine.FieldChange{
			{Path: "attributes.data.a", Before: "1", After: "9"},
			{Path: "attributes.data.b", Before: "2"},
			{Path: "attributes.data.c", After: "3"},
			{Path: "dependsOn", After: []any{"v1:ConfigMap:ns:keep"}},
		}},
		{ID: "v1:ConfigMap:ns:new", Kind: engine.Added},
		{ID: "v1:ConfigMap:ns:gone", Kind: engine.Removed},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DiffSpecs =\n%#v\nwant\n%#v", got, want)
	}
	if d := engine.DiffSpecs(from, from); len(d) != 0 {
		t.Errorf("a spec differs from itself: %v", d)
	}
}
