package engine

import (
	"strings"
	"testing"
)

func TestKubernetesID(t *testing.T) {
	cases := []struct{ apiVersion, kind, ns, name, want string }{
		{"v1", "Namespace", "", "demo", "v1:Namespace:demo"},
		{"apps/v1", "Deployment", "default", "web", "apps/v1:Deployment:default:web"},
		{"v1", "Service", "default", "web", "v1:Service:default:web"},
	}
	for _, c := range cases {
		if got := KubernetesID(c.apiVersion, c.kind, c.ns, c.name); got != c.want {
			t.Errorf("KubernetesID = %q, want %q", got, c.want)
		}
	}
}

func TestKubernetesIDOf(t *testing.T) {
	id, err := KubernetesIDOf(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "demo"},
	})
	if err != nil || id != "apps/v1:Deployment:demo:web" {
		t.Errorf("namespaced: %q, %v", id, err)
	}
	id, err = KubernetesIDOf(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "demo"}})
	if err != nil || id != "v1:Namespace:demo" {
		t.Errorf("cluster-scoped: %q, %v", id, err)
	}
	_, err = KubernetesIDOf(map[string]any{"kind": "ConfigMap", "metadata": map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "apiVersion") || !strings.Contains(err.Error(), "metadata.name") {
		t.Errorf("missing fields: %v", err)
	}
	if _, err := KubernetesIDOf(nil); err == nil {
		t.Error("nil object: no error")
	}
}
