package input

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// A spec's hooks are written by MarshalSpec and read back equal, so kumo
// spec convert's output applies with its hooks; a misspelt hook field is
// refused by name.
func TestSpecHooksRoundTrip(t *testing.T) {
	spec, err := engine.ManifestSpec([]engine.ManifestObject{
		{Where: "a.yaml", Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}},
		{Where: "b.yaml", Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j", "annotations": map[string]any{
			engine.AnnotationHelmHook: "pre-install,post-upgrade", engine.AnnotationHelmHookWeight: "3", engine.AnnotationHelmHookDeletePolicy: "hook-succeeded"}}}},
	}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	data, err := engine.MarshalSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "hooks:\n- id: batch/v1:Job:demo:j\n  events:\n  - pre-install\n  - post-upgrade\n  helm: true\n  weight: 3\n  deletePolicies:\n  - HookSucceeded\n") {
		t.Errorf("MarshalSpec:\n%s", data)
	}
	back, err := ParseSpec(data, "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Hooks, spec.Hooks) || engine.HashSpec(back) != engine.HashSpec(spec) {
		t.Errorf("read back:\n%+v\nwant\n%+v", back.Hooks, spec.Hooks)
	}
	bad := strings.Replace(string(data), "deletePolicies:", "deletePolicy:", 1)
	if _, err := ParseSpec([]byte(bad), "spec.yaml"); err == nil || !strings.Contains(err.Error(), `spec.yaml: hooks[0]: unknown field "deletePolicy"`) {
		t.Errorf("misspelt field: %v", err)
	}
}
