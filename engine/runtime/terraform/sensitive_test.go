package terraform_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/terraformtest"
)

// TestSensitiveAttributesAreListedAndMasked: local_file's sensitive_content is
// sensitive in the provider's schema. Every resource the runtime returns lists
// it, so a preview of its change and a masked record hide the value (in the
// attributes and in the terraform state beside them).
func TestSensitiveAttributesAreListedAndMasked(t *testing.T) {
	rt, _ := newRuntime(t)
	const first, second = "tf-secret-3c9a71", "tf-secret-b04e52"
	file := func(content string) *engine.Resource {
		return &engine.Resource{
			ID: engine.TerraformID("hashicorp", "local", "local_file", "key"), Type: engine.Terraform,
			Attributes: map[string]any{"filename": filepath.Join(t.TempDir(), "key"), "sensitive_content": content},
			Extensions: map[string]any{engine.ExtProvider: terraformtest.LocalProvider, engine.ExtResourceType: "local_file"},
		}
	}
	desired := file(first)
	got := apply(t, rt, desired)
	if names := engine.SensitiveAttributes(got); !slices.Contains(names, "sensitive_content") || slices.Contains(names, "filename") {
		t.Fatalf("sensitive attributes of the result: %v", names)
	}
	masked, err := json.Marshal(engine.MaskSensitive(*got))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(masked), first) {
		t.Errorf("the masked record shows the value: %s", masked)
	}

	next := recorded(desired, got)
	next.Attributes = map[string]any{"filename": desired.Attributes["filename"], "sensitive_content": second}
	c := preview(t, rt, next)
	text, _ := json.Marshal(c)
	if strings.Contains(string(text), first) || strings.Contains(string(text), second) {
		t.Errorf("the preview shows the value: %s", text)
	}
	var found bool
	for _, f := range c.Fields {
		if f.Path == "sensitive_content" {
			found = f.Before == engine.Masked && f.After == engine.Masked && f.Sensitive != ""
		}
	}
	if !found {
		t.Errorf("the change of sensitive_content is not shown masked: %s", text)
	}
}

// TestNestedSensitiveAttributesAreMasked: kumotest_object's credentials is a
// nested attribute whose token the schema marks sensitive. The whole credentials
// value is listed as sensitive, so the masked record and the preview of a
// changed token never show it.
func TestNestedSensitiveAttributesAreMasked(t *testing.T) {
	rt, _ := newRuntime(t)
	const first, second = "tf-nested-secret-5d21e8", "tf-nested-secret-9a07c3"
	dir := t.TempDir()
	desired := object("creds", dir, map[string]any{"content": "x", "credentials": map[string]any{"user": "app", "token": first}})
	got := apply(t, rt, desired)
	if names := engine.SensitiveAttributes(got); !slices.Equal(names, []string{"credentials"}) {
		t.Fatalf("sensitive attributes of the result: %v, want [credentials]", names)
	}
	masked, err := json.Marshal(engine.MaskSensitive(*got))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(masked), first) {
		t.Errorf("the masked record shows the nested value: %s", masked)
	}

	next := recorded(desired, got)
	next.Attributes = map[string]any{"dir": dir, "content": "x", "credentials": map[string]any{"user": "app", "token": second}}
	c := preview(t, rt, next)
	text, _ := json.Marshal(c)
	if strings.Contains(string(text), first) || strings.Contains(string(text), second) {
		t.Errorf("the preview shows the nested value: %s", text)
	}
	if c.Action != engine.Update || len(c.Fields) == 0 {
		t.Errorf("a changed nested token previews as %+v, want an Update", c)
	}
	for _, f := range c.Fields {
		if strings.HasPrefix(f.Path, "credentials") && (f.Before != engine.Masked || f.After != engine.Masked) {
			t.Errorf("field %s shown as %v -> %v, want masked", f.Path, f.Before, f.After)
		}
	}
}
