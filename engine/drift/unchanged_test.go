package drift

import (
	"encoding/base64"
	"testing"
)

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

// TestApplyChangesNothingAsTheApiserverStores: a Secret's stringData is
// compared as the data the apiserver stores it as, and a port that leaves
// its protocol out as the port with protocol TCP, in built-in kinds only.
func TestApplyChangesNothingAsTheApiserverStores(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secretSet := map[string]any{"f:stringData": map[string]any{"f:token": map[string]any{}}, "f:data": map[string]any{"f:plain": map[string]any{}}}
	secret := func(managed ...any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"metadata": map[string]any{"name": "s", "namespace": "n", "managedFields": managed},
			"data":     map[string]any{"token": b64("t-1"), "plain": b64("p")}}
	}
	sent := func(token any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "n"},
			"stringData": map[string]any{"token": token}, "data": map[string]any{"plain": b64("p")}}
	}
	portSet := func(protocol string) map[string]any {
		return map[string]any{"f:spec": map[string]any{"f:ports": map[string]any{
			`k:{"port":80,"protocol":"` + protocol + `"}`: map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:port": map[string]any{}},
		}}}
	}
	service := func(apiVersion, protocol string, managed ...any) map[string]any {
		return map[string]any{"apiVersion": apiVersion, "kind": "Service",
			"metadata": map[string]any{"name": "web", "namespace": "n", "managedFields": managed},
			"spec":     map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(80), "protocol": protocol, "targetPort": int64(80)}}}}
	}
	noProtocol := func(apiVersion string) map[string]any {
		return map[string]any{"apiVersion": apiVersion, "kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "n"},
			"spec": map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(80)}}}}
	}
	for _, tc := range []struct {
		name          string
		desired, live map[string]any
		want          bool
	}{
		{"stringData stored as data", sent("t-1"), secret(entry("kumo", "Apply", secretSet)), true},
		{"stringData changed", sent("t-2"), secret(entry("kumo", "Apply", secretSet)), false},
		{"stringData not a string", sent(int64(1)), secret(entry("kumo", "Apply", secretSet)), false},
		{"stringData over data of the same key", func() map[string]any {
			d := sent("t-1")
			d["data"].(map[string]any)["token"] = b64("old")
			return d
		}(), secret(entry("kumo", "Apply", secretSet)), true},
		{"a port without protocol is TCP", noProtocol("v1"), service("v1", "TCP", entry("kumo", "Apply", portSet("TCP"))), true},
		{"a port without protocol is not UDP", noProtocol("v1"), service("v1", "UDP", entry("kumo", "Apply", portSet("UDP"))), false},
		{"a custom kind's defaults are not known", noProtocol("example.com/v1"), service("example.com/v1", "TCP", entry("kumo", "Apply", portSet("TCP"))), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ApplyChangesNothing(tc.desired, tc.live, "kumo"); got != tc.want {
				t.Fatalf("ApplyChangesNothing = %v, want %v", got, tc.want)
			}
		})
	}
}
