package engine

import (
	"strings"
	"testing"
)

func cm(ns, name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": ns, "name": name}}
}

func TestValidateOK(t *testing.T) {
	s, err := ParseSpec([]byte(demoSpec), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Resources = append(s.Resources, Resource{ID: "v1:Service:demo:web", Type: Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"namespace": "demo", "name": "web"},
	}})
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
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
		{ID: "a", Type: Terraform, DependsOn: []string{"c"}},
		{ID: "b", Type: Terraform, DependsOn: []string{"a"}},
		{ID: "c", Type: Terraform, Attributes: map[string]any{"in": "$kumo_path.b.out"}},
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
		`dependency cycle: a -> c -> b -> a`,
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
	s := &Spec{Resources: []Resource{{ID: "a", Type: Terraform, DependsOn: []string{"a"}}}}
	if err := s.Validate(); err == nil || err.Error() != "dependency cycle: a -> a" {
		t.Fatalf("error = %v", err)
	}
}
