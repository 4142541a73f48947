package engine_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/input"
)

func TestMarshalSpecKeyOrderIndependent(t *testing.T) {
	a := &engine.Spec{Resources: []engine.Resource{{ID: "x", Type: engine.Terraform, Attributes: map[string]any{"b": 1, "a": map[string]any{"z": 1, "y": 2}}}}}
	var first []byte
	for range 20 { // map iteration order varies between calls
		out, err := engine.MarshalSpec(a)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = out
		} else if !bytes.Equal(first, out) {
			t.Fatalf("output varies:\n%s\n%s", first, out)
		}
	}
	if !strings.Contains(string(first), "attributes:\n    a:\n      \"y\": 2\n      z: 1\n    b: 1\n") {
		t.Errorf("keys not sorted:\n%s", first)
	}
}

func TestHashSpec(t *testing.T) {
	a, err := input.ParseSpec([]byte(`
resources:
- id: x
  type: Terraform
  attributes: {length: 16, special: false, keepers: {a: "1", b: "2"}}
`), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := input.ParseSpec([]byte(`
resources:
- attributes:
    keepers: {b: "2", a: "1"}
    special: false
    length: 16.0
  type: Terraform
  id: x
`), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ha, hb := engine.HashSpec(a), engine.HashSpec(b)
	if len(ha) != 64 || strings.ToLower(ha) != ha {
		t.Fatalf("hash %q is not lowercase hex sha256", ha)
	}
	if ha != hb {
		t.Errorf("reordered keys hash differently: %s vs %s", ha, hb)
	}
	b.Resources[0].Attributes["length"] = int64(17)
	if engine.HashSpec(b) == ha {
		t.Error("changed content, same hash")
	}
}
