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

// A Secret whose values are Kusion secret-store references is read as
// written (the worker resolves them at apply); a malformed reference, or a
// spec with references whose secretStore names a provider kumo does not
// read, is refused where the spec is read, naming the resource and field or
// the provider. The same "ref://" text elsewhere (a ConfigMap, an annotation,
// a Secret value that only contains it) is ordinary text.
func TestKusionSecretStoreRefs(t *testing.T) {
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
	s, err := ParseSpec([]byte(spec), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	refs, err := engine.SecretRefsOf(&s.Resources[0])
	if err != nil || len(refs) != 1 || refs[0].Path() != "stringData.password" ||
		refs[0].Ref != (engine.SecretRef{Name: "prod/db", Property: "password"}) {
		t.Fatalf("SecretRefsOf = %+v, %v", refs, err)
	}
	if got := s.Resources[1].Attributes["data"].(map[string]any)["k"]; got != "ref://prod/db/password" {
		t.Errorf("ConfigMap value = %v", got)
	}
	for _, c := range []struct{ from, to, want string }{
		{"ref://prod/db/password", "ref://prod/../db/password",
			`spec.yaml: v1:Secret:demo:db: stringData.password: segment "..": a reference's name and property are non-empty segments, never "." or ".."`},
		{"ref://prod/db/password", "ref://prod/db/password?stage=x",
			`spec.yaml: v1:Secret:demo:db: stringData.password: query "stage": a reference takes one non-empty version=... and nothing else`},
		{"aws: {region: us-east-1}", "azure: {vaultUrl: https://x}",
			`spec.yaml: secretStore.provider.azure: kumo reads secrets from vault and aws stores only`},
	} {
		for name, read := range map[string]func(string) error{
			"ParseSpec": func(text string) error { _, err := ParseSpec([]byte(text), "spec.yaml"); return err },
			"ReadInputs": func(text string) error {
				_, _, err := ReadInputs([]File{{Name: "spec.yaml", Data: []byte(text)}}, "")
				return err
			},
		} {
			err := read(strings.Replace(spec, c.from, c.to, 1))
			if err == nil || err.Error() != c.want {
				t.Errorf("%s with %s: error\n%v\nwant\n%s", name, c.to, err, c.want)
			}
		}
	}
	// Without references, a secretStore kumo does not read is kept as data.
	plain := strings.Replace(strings.Replace(spec, "password: ref://prod/db/password", "password: s3cret", 1), "aws: {region: us-east-1}", "azure: {vaultUrl: https://x}", 1)
	if _, err := ParseSpec([]byte(plain), "spec.yaml"); err != nil {
		t.Errorf("a spec without references and an azure secretStore: %v", err)
	}
}
