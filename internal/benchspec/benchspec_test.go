package benchspec

import "testing"

// TestUpdated: every ConfigMap gets a new value under the same key, the
// Namespace is as it was, and the spec given is not changed.
func TestUpdated(t *testing.T) {
	v1 := ConfigMaps("ns", 3, false)
	v2 := Updated(v1, "2")
	if len(v2.Resources) != len(v1.Resources) {
		t.Fatalf("%d resources, want %d", len(v2.Resources), len(v1.Resources))
	}
	if v2.Resources[0].Attributes["kind"] != "Namespace" || v2.Resources[0].Attributes["data"] != nil {
		t.Errorf("namespace %v", v2.Resources[0].Attributes)
	}
	for i := 1; i < len(v1.Resources); i++ {
		before, after := v1.Resources[i].Attributes["data"].(map[string]any), v2.Resources[i].Attributes["data"].(map[string]any)
		if len(after) != len(before) || after["index"] == before["index"] || after["index"] != before["index"].(string)+"-2" {
			t.Errorf("%s: %v -> %v, want the same key with a new value", v1.Resources[i].ID, before, after)
		}
		if v2.Resources[i].ID != v1.Resources[i].ID {
			t.Errorf("id %s -> %s", v1.Resources[i].ID, v2.Resources[i].ID)
		}
	}
}
