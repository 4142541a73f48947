package engine

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

const demoSpec = `
resources:
- id: v1:Namespace:demo
  type: Kubernetes
  attributes:
    apiVersion: v1
    kind: Namespace
    metadata:
      name: demo
- id: apps/v1:Deployment:demo:web
  type: Kubernetes
  dependsOn:
  - v1:Namespace:demo
  attributes:
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      namespace: demo
      labels:
        app.kubernetes.io/name: web
    spec:
      replicas: 2
      template:
        spec:
          containers:
          - name: web
            image: nginx:1.27
            ports:
            - containerPort: 8080
            resources:
              limits:
                cpu: 0.5
            env:
            - name: ENABLED
              value: "true"
            - name: SERVICE_IP
              value: $kumo_path.v1:Service:demo:web.spec.clusterIP
  extensions:
    kusion.io/kubernetes/strategy: {maxSurge: 1}
- id: hashicorp:random:random_password:db
  type: Terraform
  attributes:
    length: 16
    special: false
  extensions:
    provider: registry.terraform.io/hashicorp/random/3.6.0
    resourceType: random_password
secretStore:
  provider: {aws: {region: eu-west-1}}
context:
  weight: 1.5
  retries: 3
`

func TestParseSpec(t *testing.T) {
	s, err := ParseSpec([]byte(demoSpec), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Resources) != 3 {
		t.Fatalf("%d resources", len(s.Resources))
	}
	web := s.Resources[1]
	if web.ID != "apps/v1:Deployment:demo:web" || web.Type != Kubernetes || !reflect.DeepEqual(web.DependsOn, []string{"v1:Namespace:demo"}) {
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
	s1, err := ParseSpec([]byte(demoSpec), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s1.Resources[2].Extensions = map[string]any{} // empty, not nil: kept as {}
	out, err := MarshalSpec(s1)
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
	again, err := MarshalSpec(s2)
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

func TestMarshalSpecKeyOrderIndependent(t *testing.T) {
	a := &Spec{Resources: []Resource{{ID: "x", Type: Terraform, Attributes: map[string]any{"b": 1, "a": map[string]any{"z": 1, "y": 2}}}}}
	var first []byte
	for range 20 { // map iteration order varies between calls
		out, err := MarshalSpec(a)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = out
		} else if !bytes.Equal(first, out) {
			t.Fatalf("output varies:\n%s\n%s", first, out)
		}
	}
	if !strings.Contains(string(first), "attributes:\n    a:\n      \"y\": 2\n      z: 1\n    b: 1\n") {
		t.Errorf("keys not sorted:\n%s", first)
	}
}

func TestHashSpec(t *testing.T) {
	a, err := ParseSpec([]byte(`
resources:
- id: x
  type: Terraform
  attributes: {length: 16, special: false, keepers: {a: "1", b: "2"}}
`), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseSpec([]byte(`
resources:
- attributes:
    keepers: {b: "2", a: "1"}
    special: false
    length: 16.0
  type: Terraform
  id: x
`), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ha, hb := HashSpec(a), HashSpec(b)
	if len(ha) != 64 || strings.ToLower(ha) != ha {
		t.Fatalf("hash %q is not lowercase hex sha256", ha)
	}
	if ha != hb {
		t.Errorf("reordered keys hash differently: %s vs %s", ha, hb)
	}
	b.Resources[0].Attributes["length"] = int64(17)
	if HashSpec(b) == ha {
		t.Error("changed content, same hash")
	}
}
