package drift

import "testing"

// TestApplyChangesNothing: an apply is known to change nothing only when
// every field kumo sends is live with the same value and every field kumo
// owns is still sent.
func TestApplyChangesNothing(t *testing.T) {
	cmSet := map[string]any{"f:data": map[string]any{".": map[string]any{}, "f:a": map[string]any{}, "f:b": map[string]any{}}}
	live := func(data map[string]any, managed ...any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "n", "resourceVersion": "7", "managedFields": managed}, "data": data}
	}
	desired := func(data map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "n"}, "data": data}
	}
	both := map[string]any{"a": "1", "b": "2"}
	for _, tc := range []struct {
		name          string
		desired, live map[string]any
		want          bool
	}{
		{"same fields, same values", desired(both), live(both, entry("kumo", "Apply", cmSet)), true},
		{"a value differs", desired(map[string]any{"a": "1", "b": "3"}), live(both, entry("kumo", "Apply", cmSet)), false},
		{"a field kumo owns is no longer sent", desired(map[string]any{"a": "1"}), live(both, entry("kumo", "Apply", cmSet)), false},
		{"a field is added", desired(map[string]any{"a": "1", "b": "2", "c": "3"}), live(both, entry("kumo", "Apply", cmSet)), false},
		{"kumo manages nothing there", desired(both), live(both, entry("kubectl", "Update", cmSet)), false},
		// An apply that names the object and sets nothing owns nothing:
		// the apiserver keeps no entry for it, and the object stays as it is.
		{"kumo sends only the names and manages nothing", nsObj(nil), nsObj(map[string]any{"labels": map[string]any{"team": "a"}}, entry("kubectl", "Update", map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{"f:team": map[string]any{}}}})), true},
		{"names of a namespaced object only", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "n"}}, live(both), true},
		{"a label besides the names, kumo managing nothing", nsObj(map[string]any{"labels": map[string]any{"team": "a"}}), nsObj(map[string]any{"labels": map[string]any{"team": "a"}}), false},
		{"empty labels besides the names", nsObj(map[string]any{"labels": map[string]any{}}), nsObj(nil), false},
		{"an empty spec besides the names", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "n"}, "spec": map[string]any{}}, nsObj(nil), false},
		{"no metadata", map[string]any{"apiVersion": "v1", "kind": "Namespace"}, map[string]any{"apiVersion": "v1", "kind": "Namespace"}, false},
		{"the same number, typed differently", map[string]any{"spec": map[string]any{"replicas": int64(3)}},
			map[string]any{"spec": map[string]any{"replicas": float64(3)}, "metadata": map[string]any{"managedFields": []any{entry("kumo", "Apply", map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}})}}}, true},
		{"a number where a string was", map[string]any{"spec": map[string]any{"replicas": "3"}},
			map[string]any{"spec": map[string]any{"replicas": int64(3)}, "metadata": map[string]any{"managedFields": []any{entry("kumo", "Apply", map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}})}}}, false},
		{"a list item fewer", map[string]any{"spec": map[string]any{"args": []any{"a"}}},
			map[string]any{"spec": map[string]any{"args": []any{"a", "b"}}, "metadata": map[string]any{"managedFields": []any{entry("kumo", "Apply", map[string]any{"f:spec": map[string]any{"f:args": map[string]any{}}})}}}, false},
		{"a list item kumo owns by key is gone from desired", func() map[string]any {
			d := deployment(3, "nginx:1")
			delete(d["metadata"].(map[string]any), "managedFields")
			return d
		}(), func() map[string]any {
			d := deployment(3, "nginx:1", entry("kumo", "Apply", map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{
				`k:{"name":"gone"}`: map[string]any{".": map[string]any{}, "f:name": map[string]any{}},
			}}}}}))
			return d
		}(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ApplyChangesNothing(tc.desired, tc.live, "kumo"); got != tc.want {
				t.Fatalf("ApplyChangesNothing = %v, want %v", got, tc.want)
			}
		})
	}
}

// nsObj is a Namespace named n with the metadata fields md adds and, live, the
// managedFields entries managed.
func nsObj(md map[string]any, managed ...any) map[string]any {
	m := map[string]any{"name": "n"}
	for k, v := range md {
		m[k] = v
	}
	if managed != nil {
		m["managedFields"] = managed
	}
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": m}
}
