package engine

import (
	"errors"
	"strings"
	"testing"
)

func cm(ns, name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": ns, "name": name}}
}

// tfFile is a valid local_file Terraform resource named name.
func tfFile(name string, deps ...string) Resource {
	return Resource{ID: TerraformID("hashicorp", "local", "local_file", name), Type: Terraform, DependsOn: deps,
		Attributes: map[string]any{"filename": name, "content": "x"},
		Extensions: map[string]any{ExtProvider: "registry.terraform.io/hashicorp/local/1.4.0", ExtResourceType: "local_file"}}
}

func TestValidateReportsEverything(t *testing.T) {
	s := &Spec{Resources: []Resource{
		{ID: "", Type: Terraform},
		{ID: "v1:ConfigMap:demo:cfg", Type: Kubernetes, Attributes: cm("demo", "cfg")},
		{ID: "t:f:x:y", Type: "Helm"},
		{ID: "v1:ConfigMap:demo:wrong", Type: Kubernetes, Attributes: cm("demo", "right")},
		{ID: "v1:ConfigMap:demo:cfg", Type: Kubernetes, Attributes: cm("demo", "cfg")},
		{ID: "v1:ConfigMap:demo:deps", Type: Kubernetes, DependsOn: []string{"nope"}, Attributes: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "demo", "name": "deps"},
			"data": map[string]any{"ip": "$kumo_path.v1:Service:demo:missing.spec.clusterIP"},
		}},
		tfFile("a", tfFile("c").ID),
		tfFile("b", tfFile("a").ID),
		withAttr(tfFile("c"), "content", "$kumo_path."+tfFile("b").ID+".id"),
		{ID: "v1:ConfigMap:demo:noname", Type: Kubernetes, Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}},
		{ID: "notype"},
	}}
	err := s.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`resources[0]: empty id`,
		`duplicate resource id "v1:ConfigMap:demo:cfg" (resources[1] and resources[4])`,
		`resources[2] ("t:f:x:y"): unknown type "Helm"`,
		`resources[3] ("v1:ConfigMap:demo:wrong"): id does not match the object, whose apiVersion:kind:namespace:name is "v1:ConfigMap:demo:right"`,
		`resources[5] ("v1:ConfigMap:demo:deps"): dependsOn names unknown resource "nope"`,
		`resources[5] ("v1:ConfigMap:demo:deps"): reference $kumo_path.v1:Service:demo:missing.spec.clusterIP: no resource with that id in the spec`,
		`dependency cycle: hashicorp:local:local_file:a -> hashicorp:local:local_file:c -> hashicorp:local:local_file:b -> hashicorp:local:local_file:a`,
		`resources[9] ("v1:ConfigMap:demo:noname"): attributes: kubernetes object without metadata.name`,
		`resources[10] ("notype"): missing type`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q", want)
		}
	}
	if n := len(strings.Split(msg, "\n")); n != 9 {
		t.Errorf("%d problems reported, want 9:\n%s", n, msg)
	}
}

func TestValidateSelfDependency(t *testing.T) {
	s := &Spec{Resources: []Resource{tfFile("a", tfFile("a").ID)}}
	if err := s.Validate(); err == nil || err.Error() != "dependency cycle: hashicorp:local:local_file:a -> hashicorp:local:local_file:a" {
		t.Fatalf("error = %v", err)
	}
}

func withAttr(r Resource, k string, v any) Resource {
	r.Attributes[k] = v
	return r
}

// TestValidateTerraformMetaArguments: a Terraform resource whose attributes hold a
// meta-argument (a local-exec provisioner runs shell on the worker) is refused,
// each key named with the resource.
func TestValidateTerraformMetaArguments(t *testing.T) {
	d := Resource{ID: "builtin:terraform:terraform_data:d", Type: Terraform,
		Attributes: map[string]any{
			"input":       "x",
			"provisioner": []any{map[string]any{"local-exec": map[string]any{"command": "touch /tmp/kumo-pwned"}}},
		},
		Extensions: map[string]any{ExtProvider: "terraform.io/builtin/terraform", ExtResourceType: "terraform_data"}}
	err := (&Spec{Resources: []Resource{d}}).Validate()
	want := `resources[0] ("builtin:terraform:terraform_data:d"): attribute "provisioner" is a Terraform meta-argument: a spec carries the resource's arguments only`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	for _, k := range []string{"connection", "count", "depends_on", "for_each", "lifecycle", "provider", "provisioner"} {
		r := tfFile("f")
		r.Attributes[k] = map[string]any{}
		err := (&Spec{Resources: []Resource{r}}).Validate()
		if err == nil || !strings.Contains(err.Error(), `resources[0] ("`+r.ID+`"): attribute "`+k+`" is a Terraform meta-argument`) {
			t.Errorf("%s: error = %v, want the key refused naming the resource", k, err)
		}
	}
	// Arguments whose names merely contain a meta-argument are the resource's own.
	r := tfFile("f")
	r.Attributes["provider_name"], r.Attributes["counter"] = "x", 1
	if err := (&Spec{Resources: []Resource{r}}).Validate(); err != nil {
		t.Error(err)
	}
}

// TestValidateTerraform: malformed Terraform IDs and extensions are reported, each
// naming the resource.
func TestValidateTerraform(t *testing.T) {
	ok := tfFile("ok")
	builtin := Resource{ID: "builtin:terraform:terraform_data:d", Type: Terraform,
		Extensions: map[string]any{ExtProvider: "terraform.io/builtin/terraform", ExtResourceType: "terraform_data"}}
	if err := (&Spec{Resources: []Resource{ok, builtin}}).Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		mod  func(r *Resource)
		want string
	}{
		{"three-part id", func(r *Resource) { r.ID = "hashicorp:local:x" }, "not a Terraform resource ID"},
		{"bad name", func(r *Resource) { r.ID = "hashicorp:local:local_file:9x" }, `resource name "9x" is not a Terraform name`},
		{"no provider", func(r *Resource) { delete(r.Extensions, ExtProvider) }, "missing extensions.provider"},
		{"bad provider", func(r *Resource) { r.Extensions[ExtProvider] = "hashicorp/local" }, `extensions.provider: "hashicorp/local" is not host/namespace/name[/version]`},
		{"other provider", func(r *Resource) { r.Extensions[ExtProvider] = "registry.terraform.io/hashicorp/random/3.0.0" },
			"id names provider hashicorp/local but extensions.provider is registry.terraform.io/hashicorp/random/3.0.0"},
		{"no type", func(r *Resource) { delete(r.Extensions, ExtResourceType) }, "missing extensions.resourceType"},
		{"other type", func(r *Resource) { r.Extensions[ExtResourceType] = "local_sensitive_file" }, "id names resource type local_file but extensions.resourceType is local_sensitive_file"},
		{"bad meta", func(r *Resource) { r.Extensions[ExtProviderMeta] = "x" }, "extensions.providerMeta is not an object"},
		{"bad import id", func(r *Resource) { r.Extensions[ExtImportID] = 3 }, `extensions."kusionstack.io/import-id" is not a non-empty string`},
	}
	for _, c := range cases {
		r := tfFile("f")
		c.mod(&r)
		err := (&Spec{Resources: []Resource{r}}).Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `resources[0] ("`+r.ID+`"): `) {
			t.Errorf("%s: error = %v, want one naming the resource with %q", c.name, err, c.want)
		}
		if _, err := ParseTerraform(&r); err == nil || !strings.HasPrefix(err.Error(), r.ID+": ") {
			t.Errorf("%s: ParseTerraform error = %v, want it to start with the id", c.name, err)
		}
	}
	p, err := ParseTerraform(&ok)
	if err != nil {
		t.Fatal(err)
	}
	if p.Provider.Source() != "registry.terraform.io/hashicorp/local" || p.Provider.Version != "1.4.0" || p.Type != "local_file" || p.Name != "ok" || p.Provider.Builtin() {
		t.Errorf("parsed %+v", p)
	}
	if p, err := ParseTerraform(&builtin); err != nil || !p.Provider.Builtin() || p.Provider.Version != "" {
		t.Errorf("builtin: %+v %v", p, err)
	}
}

// A sealed value is never input: wherever it stands in a spec (a Secret's data,
// a nested attribute, inside a longer string, an extension), Validate refuses
// it naming the resource and field, without the value.
func TestValidateRefusesSealedValues(t *testing.T) {
	const sealed = "kumo:sealed:v1:k1:AAAAsecretciphertext"
	secret := Resource{ID: "v1:Secret:b:db", Type: Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "b"},
		"data":       map[string]any{"password": sealed},
		"stringData": map[string]any{"cfg": `{"nested":"` + sealed + `"}`},
	}}
	cm := Resource{ID: "v1:ConfigMap:b:c", Type: Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "b"},
		"data": map[string]any{"list": []any{"ok", sealed}},
	}, Extensions: map[string]any{"note": sealed}}
	err := (&Spec{Resources: []Resource{secret, cm}}).Validate()
	if !errors.Is(err, ErrSealedCopied) {
		t.Fatalf("Validate: %v, want ErrSealedCopied", err)
	}
	for _, want := range []string{
		"v1:Secret:b:db", "attributes/data/password", "attributes/stringData/cfg",
		"v1:ConfigMap:b:c", "attributes/data/list/1", "extensions/note",
		"sealed values cannot be copied between resources",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "secretciphertext") {
		t.Errorf("error shows the value: %v", err)
	}
	// The same spec with clear values is valid.
	secret.Attributes["data"] = map[string]any{"password": "cGFzcw=="}
	secret.Attributes["stringData"] = map[string]any{"cfg": "x"}
	cm.Attributes["data"] = map[string]any{"list": []any{"ok"}}
	cm.Extensions = nil
	if err := (&Spec{Resources: []Resource{secret, cm}}).Validate(); err != nil {
		t.Errorf("clear spec: %v", err)
	}
}
