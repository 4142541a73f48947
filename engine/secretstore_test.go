package engine

import (
	"strings"
	"testing"
)

// A spec that reaches validation without engine/input (a workflow started
// directly, a spec built in Go) is refused the same way: Secret data and
// stringData values that are Kusion secret-store references, each named; the
// same text outside a v1 Secret's data is left alone.
func TestValidateRefusesSecretStoreRefs(t *testing.T) {
	secret := func(id, apiVersion, field string, values map[string]any) Resource {
		return Resource{ID: id, Type: Kubernetes, Attributes: map[string]any{
			"apiVersion": apiVersion, "kind": "Secret",
			"metadata": map[string]any{"namespace": "demo", "name": strings.Split(id, ":")[3]},
			field:      values,
		}}
	}
	s := &Spec{Resources: []Resource{
		secret("v1:Secret:demo:a", "v1", "data", map[string]any{"k": "ref://a/k", "z": "cGxhaW4="}),
		secret("v1:Secret:demo:b", "v1", "stringData", map[string]any{"p": " ref://b/p"}),
		{ID: "v1:ConfigMap:demo:c", Type: Kubernetes, Attributes: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "demo", "name": "c"},
			"data": map[string]any{"k": "ref://c/k"},
		}},
	}}
	err := s.Validate()
	if err == nil {
		t.Fatal("Validate accepted Secret values that are secret-store references")
	}
	for _, want := range []string{
		`v1:Secret:demo:a: data.k: "ref://..." refers to a Kusion secret store, which kumo does not support yet`,
		`v1:Secret:demo:b: stringData.p: "ref://..." refers to a Kusion secret store, which kumo does not support yet`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v\nwant it to contain %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "ConfigMap") || strings.Contains(err.Error(), "data.z") {
		t.Errorf("Validate refused more than the references: %v", err)
	}
	s.Resources = s.Resources[2:]
	if err := s.Validate(); err != nil {
		t.Errorf("a ConfigMap holding ref:// text: %v", err)
	}
	s.SecretStore = map[string]any{"provider": map[string]any{"vault": map[string]any{}, "aws": map[string]any{}}}
	if got := secretStoreProviders(s.SecretStore); got != " (the spec's secretStore, provider aws, vault)" {
		t.Errorf("secretStoreProviders = %q", got)
	}
}
