package input

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

func parseTestSpec(t *testing.T, name string) *engine.Spec {
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
	byID := map[string]*engine.Resource{}
	for i := range s.Resources {
		byID[s.Resources[i].ID] = &s.Resources[i]
	}
	dep := byID["apps/v1:Deployment:shop:shop-dev-web"]
	if w, err := engine.IsWorkload(dep); err != nil || !w {
		t.Errorf("engine.IsWorkload(deployment) = %v, %v", w, err)
	}
	if w, err := engine.IsWorkload(byID["v1:Service:shop:shop-dev-web-private"]); err != nil || w {
		t.Errorf(`engine.IsWorkload("false") = %v, %v`, w, err)
	}
	if dep.Extensions[engine.ExtHealthPolicy] == nil || byID["v1:ConfigMap:shop:shop-dev-web-config"].Extensions["example.com/owner"] != "team-a" {
		t.Error("healthPolicy or an unknown extension was dropped")
	}
	// The reference alone orders the apply: the ConfigMap comes first.
	g, err := s.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if !waitsFor(g, dep.ID, "v1:ConfigMap:shop:shop-dev-web-config") {
		t.Error("the deployment does not wait for the ConfigMap it refers to")
	}
	// The 4-part cluster-scoped ID is valid and warned about, once.
	warnings := s.Warnings()
	if len(warnings) != 1 || !strings.Contains(warnings[0], `rbac.authorization.k8s.io/v1:ClusterRole:default:shop-reader: ClusterRole is cluster-scoped; namespace "default" is ignored`) {
		t.Errorf("warnings = %q", warnings)
	}
	out, err := engine.MarshalSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSpec(out, "out")
	if err != nil {
		t.Fatal(err)
	}
	if engine.HashSpec(back) != engine.HashSpec(s) || !reflect.DeepEqual(back, s) {
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

func mustGraph(t *testing.T, s *engine.Spec) interface{ TopoSort() ([]string, error) } {
	t.Helper()
	g, err := s.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A Secret whose values are Kusion secret-store references is refused where the
// spec is read, naming the resource, the field and the spec's secretStore, without
// the reference; the same "ref://" text elsewhere (a ConfigMap, an annotation, a
// Secret value that only contains it) is ordinary text and is read unchanged.
func TestKusionSecretStoreRefused(t *testing.T) {
	const spec = `resources:
- id: v1:Secret:demo:db
  type: Kubernetes
  attributes:
    apiVersion: v1
    kind: Secret
    metadata: {name: db, namespace: demo, annotations: {note: "ref://not/resolved"}}
    stringData:
      password: ref://prod/db/password
      user: admin
      url: "postgres://x?see=ref://y"
- id: v1:ConfigMap:demo:c
  type: Kubernetes
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: c, namespace: demo}
    data: {k: "ref://prod/db/password"}
secretStore:
  provider:
    aws: {region: us-east-1}
`
	for name, read := range map[string]func() error{
		"ParseSpec": func() error { _, err := ParseSpec([]byte(spec), "spec.yaml"); return err },
		"ReadInputs": func() error {
			_, _, err := ReadInputs([]File{{Name: "spec.yaml", Data: []byte(spec)}}, "")
			return err
		},
	} {
		err := read()
		if err == nil {
			t.Fatalf("%s: a spec with a ref:// Secret value was accepted", name)
		}
		want := `spec.yaml: v1:Secret:demo:db: stringData.password: "ref://..." refers to a Kusion secret store (the spec's secretStore, provider aws), which kumo does not support yet; put the value in a kumo secret instead`
		if err.Error() != want {
			t.Errorf("%s: error\n%s\nwant\n%s", name, err, want)
		}
		if strings.Contains(err.Error(), "prod/db") {
			t.Errorf("%s: the error prints the reference: %v", name, err)
		}
	}
	// Without the reference the same spec reads, and "ref://" inside other values stays.
	ok := strings.Replace(spec, "password: ref://prod/db/password", "password: s3cret", 1)
	s, err := ParseSpec([]byte(ok), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := s.Resources[1].Attributes["data"].(map[string]any)["k"]; got != "ref://prod/db/password" {
		t.Errorf("ConfigMap value = %v", got)
	}
}
