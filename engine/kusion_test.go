package engine

import (
	"reflect"
	"strings"
	"testing"
)

func parseTestSpec(t *testing.T, name string) *Spec {
	t.Helper()
	in := readInput(t, name)
	s, err := ParseSpec(in.Data, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// A Spec as Kusion writes it is read, validated, and written back with nothing
// lost: secretStore null, context, healthPolicy and unknown extensions included.
func TestKusionSpecKubernetes(t *testing.T) {
	s := parseTestSpec(t, "kusion-kubernetes.yaml")
	if s.SecretStore != nil {
		t.Errorf("secretStore = %v, want nil for null", s.SecretStore)
	}
	if s.Context["owner"] != "platform-team" || s.Context["runtimes"] == nil {
		t.Errorf("context = %v", s.Context)
	}
	byID := map[string]*Resource{}
	for i := range s.Resources {
		byID[s.Resources[i].ID] = &s.Resources[i]
	}
	dep := byID["apps/v1:Deployment:shop:shop-dev-web"]
	if w, err := IsWorkload(dep); err != nil || !w {
		t.Errorf("IsWorkload(deployment) = %v, %v", w, err)
	}
	if w, err := IsWorkload(byID["v1:Service:shop:shop-dev-web-private"]); err != nil || w {
		t.Errorf(`IsWorkload("false") = %v, %v`, w, err)
	}
	if dep.Extensions[ExtHealthPolicy] == nil || byID["v1:ConfigMap:shop:shop-dev-web-config"].Extensions["example.com/owner"] != "team-a" {
		t.Error("healthPolicy or an unknown extension was dropped")
	}
	// The reference alone orders the apply: the ConfigMap comes first.
	g, err := s.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if !ancestors(g, dep.ID)["v1:ConfigMap:shop:shop-dev-web-config"] {
		t.Error("the deployment does not wait for the ConfigMap it refers to")
	}
	// The 4-part cluster-scoped ID is valid and warned about, once.
	warnings := s.Warnings()
	if len(warnings) != 1 || !strings.Contains(warnings[0], `rbac.authorization.k8s.io/v1:ClusterRole:default:shop-reader: ClusterRole is cluster-scoped; namespace "default" is ignored`) {
		t.Errorf("warnings = %q", warnings)
	}
	out, err := MarshalSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSpec(out, "out")
	if err != nil {
		t.Fatal(err)
	}
	if HashSpec(back) != HashSpec(s) || !reflect.DeepEqual(back, s) {
		t.Fatalf("round trip changed the spec:\n%s", out)
	}
}

func TestKusionSpecMixed(t *testing.T) {
	s := parseTestSpec(t, "kusion-mixed.yaml")
	if s.SecretStore == nil {
		t.Error("secretStore dropped")
	}
	order, err := mustGraph(t, s).TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"builtin:terraform:terraform_data:db-seed", "hashicorp:local:local_file:db-config", "v1:Secret:shop:db"}
	var got []string
	for _, id := range order {
		if id != "v1:Namespace:shop" {
			got = append(got, id)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("order = %v, want %v (from $kusion_path references alone)", got, want)
	}
}

func mustGraph(t *testing.T, s *Spec) interface{ TopoSort() ([]string, error) } {
	t.Helper()
	g, err := s.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

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
