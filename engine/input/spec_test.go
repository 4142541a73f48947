package input

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

func TestParseSpec(t *testing.T) {
	s, err := ParseSpec(readInput(t, "demo-spec.yaml").Data, "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Resources) != 3 {
		t.Fatalf("%d resources", len(s.Resources))
	}
	web := s.Resources[1]
	if web.ID != "apps/v1:Deployment:demo:web" || web.Type != engine.Kubernetes || !reflect.DeepEqual(web.DependsOn, []string{"v1:Namespace:demo"}) {
		t.Errorf("web = %+v", web)
	}
	spec := web.Attributes["spec"].(map[string]any)
	if got := spec["replicas"]; got != int64(2) {
		t.Errorf("replicas = %#v (%T), want int64", got, got)
	}
	c := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if got := c["ports"].([]any)[0].(map[string]any)["containerPort"]; got != int64(8080) {
		t.Errorf("containerPort = %#v", got)
	}
	if got := c["resources"].(map[string]any)["limits"].(map[string]any)["cpu"]; got != 0.5 {
		t.Errorf("cpu = %#v", got)
	}
	if got := c["env"].([]any)[0].(map[string]any)["value"]; got != "true" {
		t.Errorf("quoted string became %#v", got)
	}
	if got := web.Extensions["kusion.io/kubernetes/strategy"].(map[string]any)["maxSurge"]; got != int64(1) {
		t.Errorf("extension number = %#v", got)
	}
	if got := s.Resources[2].Attributes["length"]; got != int64(16) {
		t.Errorf("terraform length = %#v", got)
	}
	if got := s.Context["retries"]; got != int64(3) {
		t.Errorf("context retries = %#v", got)
	}
	if got := s.Context["weight"]; got != 1.5 {
		t.Errorf("context weight = %#v", got)
	}
	want := map[string]any{"provider": map[string]any{"aws": map[string]any{"region": "eu-west-1"}}}
	if !reflect.DeepEqual(s.SecretStore, want) {
		t.Errorf("secretStore = %#v", s.SecretStore)
	}
}

func TestParseSpecJSON(t *testing.T) {
	s, err := ParseSpec([]byte(`{"resources":[{"id":"a:b:c:d","type":"Terraform","attributes":{"n":1.0,"f":1.25}}]}`), "spec.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Resources[0].Attributes; got["n"] != int64(1) || got["f"] != 1.25 {
		t.Errorf("attributes = %#v", got)
	}
}

func TestParseSpecErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"unknown resource field", `
resources:
- id: v1:Namespace:demo
  type: Kubernetes
- id: v1:ConfigMap:demo:a
  type: Kubernetes
- id: v1:ConfigMap:demo:b
  type: Kubernetes
- id: v1:ConfigMap:demo:x
  type: Kubernetes
  dependson: [v1:Namespace:demo]
`, `spec.yaml: resources[3] ("v1:ConfigMap:demo:x"): unknown field "dependson"`},
		{"unknown top-level field", "resources: []\nresorces: []\n", `spec.yaml: unknown field "resorces"`},
		{"malformed yaml", "resources:\n- id: a\n  type: [Kubernetes\n", `spec.yaml: yaml: line `},
		{"bad indentation", "resources:\n  - id: a\n   type: b\n", `spec.yaml: yaml: line 2`},
		{"wrong type", "resources:\n- id: a\n  type: Terraform\n  dependsOn: x\n", `spec.yaml: resources[0] ("a"): field "dependsOn": cannot use string as array`},
		{"resources not a list", "resources: {a: 1}\n", `spec.yaml: field "resources": cannot use object as array`},
		{"wrong case", "resources:\n- ID: a\n  type: Terraform\n", `spec.yaml: resources[0]: unknown field "ID"`},
		{"empty", "\n# nothing\n", `spec.yaml: empty document`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(c.in), "spec.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error = %v\nwant prefix %q", err, c.want)
			}
		})
	}
}

func TestMarshalSpecRoundTrip(t *testing.T) {
	s1, err := ParseSpec(readInput(t, "demo-spec.yaml").Data, "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s1.Resources[2].Extensions = map[string]any{} // empty, not nil: kept as {}
	out, err := engine.MarshalSpec(s1)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ParseSpec(out, "marshalled")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !reflect.DeepEqual(s1, s2) {
		t.Fatalf("round trip differs:\n%#v\n%#v\n%s", s1, s2, out)
	}
	again, err := engine.MarshalSpec(s2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, again) {
		t.Fatalf("marshal not stable:\n%s\n---\n%s", out, again)
	}
	// id first, the string "true" stays a string.
	text := string(out)
	if !strings.HasPrefix(text, "resources:\n- id: v1:Namespace:demo\n  type: Kubernetes\n") {
		t.Errorf("unexpected layout:\n%s", text)
	}
	if !strings.Contains(text, `value: "true"`) {
		t.Errorf("string \"true\" not quoted:\n%s", text)
	}
}
