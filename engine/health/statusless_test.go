package health

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestStatuslessKindsAreHealthyOnceApplied: every kind Statusless names is
// Healthy by Check as an apply returns it; kinds with a status of their own,
// or a group that only shares the name, are not statusless.
func TestStatuslessKindsAreHealthyOnceApplied(t *testing.T) {
	for gk := range statusless {
		group, kind, _ := strings.Cut(gk, "/")
		apiVersion := "v1"
		if group != "" {
			apiVersion = group + "/v1"
		}
		if !Statusless(apiVersion, kind) {
			t.Errorf("Statusless(%q, %q) is false", apiVersion, kind)
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "x", "namespace": "ns"}}}
		if h := Check(obj); h.Status != Healthy {
			t.Errorf("%s: Check says %s", gk, h)
		}
	}
	for _, c := range [][2]string{
		{"v1", "Service"}, {"apps/v1", "Deployment"}, {"v1", "Namespace"}, {"v1", "PersistentVolumeClaim"},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition"}, {"example.com/v1", "ConfigMap"}, {"batch/v1", "Job"},
	} {
		if Statusless(c[0], c[1]) {
			t.Errorf("Statusless(%q, %q) is true", c[0], c[1])
		}
	}
}
