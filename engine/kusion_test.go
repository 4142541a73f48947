package engine

import (
	"strings"
	"testing"
)

func TestParseGVK(t *testing.T) {
	for _, tc := range []struct{ in, apiVersion, kind string }{
		{"/v1, Kind=Namespace", "v1", "Namespace"},
		{"apps/v1, Kind=Deployment", "apps/v1", "Deployment"},
		{"apiextensions.k8s.io/v1, Kind=CustomResourceDefinition", "apiextensions.k8s.io/v1", "CustomResourceDefinition"},
	} {
		a, k, err := ParseGVK(tc.in)
		if err != nil || a != tc.apiVersion || k != tc.kind {
			t.Errorf("ParseGVK(%q) = %q, %q, %v", tc.in, a, k, err)
		}
	}
	for _, bad := range []string{"", "v1", "v1, Kind=", "Deployment", "apps/v1/x, Kind=D", ", Kind=D", "apps/, Kind=D"} {
		if _, _, err := ParseGVK(bad); err == nil {
			t.Errorf("ParseGVK(%q): no error", bad)
		}
	}
}

func TestValidateKusionExtensionsAndSameObject(t *testing.T) {
	cr := func(id, ns string, ext map[string]any) Resource {
		meta := map[string]any{"name": "prometheus"}
		if ns != "" {
			meta["namespace"] = ns
		}
		return Resource{ID: id, Type: Kubernetes, Extensions: ext, Attributes: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta}}
	}
	for _, tc := range []struct {
		name string
		res  []Resource
		want string
	}{
		{"one object under two ids", []Resource{
			cr("rbac.authorization.k8s.io/v1:ClusterRole:prometheus", "", nil),
			cr("rbac.authorization.k8s.io/v1:ClusterRole:default:prometheus", "default", nil)},
			`resources[0] ("rbac.authorization.k8s.io/v1:ClusterRole:prometheus") and resources[1] ("rbac.authorization.k8s.io/v1:ClusterRole:default:prometheus") are the same object (ClusterRole prometheus)`},
		{"GVK disagrees", []Resource{cr("rbac.authorization.k8s.io/v1:ClusterRole:prometheus", "", map[string]any{ExtGVK: "rbac.authorization.k8s.io/v1, Kind=Role"})},
			`extensions."GVK" is "rbac.authorization.k8s.io/v1, Kind=Role" but the object is apiVersion "rbac.authorization.k8s.io/v1", kind "ClusterRole"`},
		{"GVK malformed", []Resource{cr("rbac.authorization.k8s.io/v1:ClusterRole:prometheus", "", map[string]any{ExtGVK: "ClusterRole"})},
			`extensions.GVK "ClusterRole": want`},
		{"is-workload not a boolean", []Resource{cr("rbac.authorization.k8s.io/v1:ClusterRole:prometheus", "", map[string]any{ExtIsWorkload: "yes please"})},
			`extensions."kusion.io/is-workload": "yes please" is not a boolean`},
		{"kubeConfig not a path", []Resource{cr("rbac.authorization.k8s.io/v1:ClusterRole:prometheus", "", map[string]any{ExtKubeConfig: 3})},
			`extensions."kubeConfig": 3 is not a file path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Spec{Resources: tc.res}).Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v\nwant %q", err, tc.want)
			}
		})
	}
	// The same object in two clusters is two objects.
	two := &Spec{Resources: []Resource{
		cr("rbac.authorization.k8s.io/v1:ClusterRole:prometheus", "", nil),
		cr("rbac.authorization.k8s.io/v1:ClusterRole:default:prometheus", "default", map[string]any{ExtKubeConfig: "/etc/other.kubeconfig"})}}
	if err := two.Validate(); err != nil {
		t.Fatalf("two clusters: %v", err)
	}
}
