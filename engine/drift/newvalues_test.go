package drift

import (
	"reflect"
	"testing"
)

// TestApplyOnlyNewValues: an apply is computed locally only when it gives new
// scalar values to fields kumo owns, and nothing else: no field added or
// dropped, no list touched, no field of another manager.
func TestApplyOnlyNewValues(t *testing.T) {
	cmSet := map[string]any{"f:data": map[string]any{".": map[string]any{}, "f:a": map[string]any{}, "f:b": map[string]any{}}}
	live := func(data map[string]any, managed ...any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "n", "resourceVersion": "7", "uid": "u-1", "managedFields": managed}, "data": data}
	}
	desired := func(data map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "n"}, "data": data}
	}
	both := map[string]any{"a": "1", "b": "2"}
	kumo := entry("kumo", "Apply", cmSet)

	t.Run("new values of owned fields", func(t *testing.T) {
		l := live(both, kumo)
		got, ok := ApplyOnlyNewValues(desired(map[string]any{"a": "1", "b": "3"}), l, "kumo")
		if !ok {
			t.Fatal("not known, want the planned object")
		}
		want := live(map[string]any{"a": "1", "b": "3"}, kumo)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("planned %v, want %v", got, want)
		}
		if l["data"].(map[string]any)["b"] != "2" {
			t.Error("live was changed")
		}
	})
	t.Run("an owned label's new value", func(t *testing.T) {
		set := map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{"f:tier": map[string]any{}}}, "f:data": cmSet["f:data"]}
		l := live(both, entry("kumo", "Apply", set))
		l["metadata"].(map[string]any)["labels"] = map[string]any{"tier": "a", "other": "x"}
		d := desired(both)
		d["metadata"].(map[string]any)["labels"] = map[string]any{"tier": "b"}
		got, ok := ApplyOnlyNewValues(d, l, "kumo")
		if !ok {
			t.Fatal("not known")
		}
		if labels := got["metadata"].(map[string]any)["labels"]; !reflect.DeepEqual(labels, map[string]any{"tier": "b", "other": "x"}) {
			t.Errorf("labels %v, want tier=b and the other manager's label kept", labels)
		}
	})
	for _, tc := range []struct {
		name          string
		desired, live map[string]any
	}{
		{"a field kumo owns is no longer sent", desired(map[string]any{"a": "9"}), live(both, kumo)},
		{"a field is added", desired(map[string]any{"a": "1", "b": "2", "c": "3"}), live(both, kumo)},
		{"kumo applied nothing there", desired(map[string]any{"a": "1", "b": "3"}), live(both, entry("kubectl", "Update", cmSet))},
		{"no managedFields", desired(map[string]any{"a": "1", "b": "3"}), live(both)},
		{"a null value (removes the field)", desired(map[string]any{"a": "1", "b": nil}), live(both, kumo)},
		{"a label kumo does not own", func() map[string]any {
			d := desired(both)
			d["metadata"].(map[string]any)["labels"] = map[string]any{"x": "y"}
			return d
		}(), live(both, kumo)},
		{"another name", func() map[string]any {
			d := desired(map[string]any{"a": "1", "b": "3"})
			d["metadata"].(map[string]any)["name"] = "other"
			return d
		}(), live(both, kumo)},
		{"a list item changes", map[string]any{"spec": map[string]any{"args": []any{"a", "c"}}},
			map[string]any{"spec": map[string]any{"args": []any{"a", "b"}}, "metadata": map[string]any{"managedFields": []any{entry("kumo", "Apply", map[string]any{"f:spec": map[string]any{"f:args": map[string]any{}}})}}}},
		{"a map where a value was", map[string]any{"spec": map[string]any{"x": map[string]any{"y": "1"}}},
			map[string]any{"spec": map[string]any{"x": "1"}, "metadata": map[string]any{"managedFields": []any{entry("kumo", "Apply", map[string]any{"f:spec": map[string]any{"f:x": map[string]any{"f:y": map[string]any{}}}})}}}},
		{"a Secret (stringData is stored as data)", map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "c"}, "data": map[string]any{"a": "MQ=="}},
			map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "c", "managedFields": []any{entry("kumo", "Apply", map[string]any{"f:data": map[string]any{"f:a": map[string]any{}}})}}, "data": map[string]any{"a": "Mg=="}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := ApplyOnlyNewValues(tc.desired, tc.live, "kumo"); ok {
				t.Fatalf("planned %v, want not known", got)
			}
		})
	}
}
