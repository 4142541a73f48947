package terraform

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

func TestMainConfig(t *testing.T) {
	spec := &engine.TerraformResource{
		Provider:     engine.TerraformProvider{Host: "registry.terraform.io", Namespace: "hashicorp", Name: "local", Version: "1.4.0"},
		ProviderMeta: map[string]any{"x": "${y}"},
		Type:         "local_file", Name: "f",
	}
	b, err := mainConfig(spec, map[string]any{"content": "a ${b} %{c}", "m": map[string]any{"${k}": 1}}, true)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"terraform": map[string]any{"required_providers": map[string]any{"local": map[string]any{"source": "registry.terraform.io/hashicorp/local", "version": "1.4.0"}}},
		"provider":  map[string]any{"local": map[string]any{"x": "$${y}"}},
		"resource": map[string]any{"local_file": map[string]any{"f": map[string]any{
			"provider": "local", "content": "a $${b} %%{c}", "m": map[string]any{"$${k}": 1.0},
		}}},
		"output": map[string]any{"kumo": map[string]any{"value": "${local_file.f}", "sensitive": true}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("main.tf.json:\n%s", b)
	}

	builtin := &engine.TerraformResource{Provider: engine.TerraformProvider{Host: "terraform.io", Namespace: "builtin", Name: "terraform"}, Type: "terraform_data", Name: "d"}
	b, err = mainConfig(builtin, nil, false)
	if err != nil || string(b) != "{}" {
		t.Errorf("builtin provider only: %s %v", b, err)
	}
}

func TestWithUnknowns(t *testing.T) {
	after := map[string]any{"a": "x", "l": []any{map[string]any{"p": 1}}}
	unknown := map[string]any{"id": true, "l": []any{map[string]any{"q": true}, true}}
	got := withUnknowns(after, unknown)
	want := map[string]any{"a": "x", "id": engine.KnownAfterApply, "l": []any{map[string]any{"p": 1, "q": engine.KnownAfterApply}, engine.KnownAfterApply}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v", got)
	}
}

// TestMainConfigRefusesMetaArguments: the resource block is never written with a
// meta-argument in it, whoever called the runtime.
func TestMainConfigRefusesMetaArguments(t *testing.T) {
	builtin := &engine.TerraformResource{Provider: engine.TerraformProvider{Host: "terraform.io", Namespace: "builtin", Name: "terraform"}, Type: "terraform_data", Name: "d"}
	attrs := map[string]any{"input": "x", "provisioner": []any{map[string]any{"local-exec": map[string]any{"command": "true"}}}}
	b, err := mainConfig(builtin, attrs, true)
	if err == nil || b != nil || err.Error() != `attribute "provisioner" is a Terraform meta-argument: a spec carries the resource's arguments only` {
		t.Errorf("mainConfig = %s, %v; want the provisioner refused", b, err)
	}
	// Without the resource block the attributes are not written: refreshing and
	// destroying a recorded resource need only the provider.
	if _, err := mainConfig(builtin, attrs, false); err != nil {
		t.Error(err)
	}
}
