package engine

import (
	"testing"

	"github.com/kumoproj/kumo/engine/planpolicy"
)

func TestPolicyResource(t *testing.T) {
	live := &Resource{ID: "v1:Service:prod:web", Type: Kubernetes, Attributes: map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": "prod", "labels": map[string]any{"team": "web"}}}}
	r := PolicyResource(Change{ID: live.ID, Type: Kubernetes, Action: Delete}, nil, live)
	if r.Kind != "Service" || r.Namespace != "prod" || r.Name != "web" || r.Action != planpolicy.ActionDelete || r.Labels["team"] != "web" || r.Desired != nil {
		t.Errorf("PolicyResource = %+v", r)
	}
	tf := PolicyResource(Change{ID: "hashicorp:random:random_password:db", Type: Terraform, Action: Adopt,
		Fields: []FieldChange{{Path: "length"}}}, &Resource{Attributes: map[string]any{"length": 16}}, nil)
	if tf.Kind != "random_password" || tf.Action != planpolicy.ActionUpdate || len(tf.Paths) != 1 {
		t.Errorf("PolicyResource(terraform) = %+v", tf)
	}
}

func TestPolicyDigest(t *testing.T) {
	changes := []Change{{ID: "v1:ConfigMap:a:b", Type: Kubernetes, Action: Create}}
	if PolicyDigest(changes, planpolicy.Results{}) != PlanDigest(changes) {
		t.Error("a plan without violations changed its digest")
	}
	warned := planpolicy.Results{Violations: []planpolicy.Violation{{Resource: "v1:ConfigMap:a:b", Rule: "r", Message: "m", Effect: planpolicy.Warn}}}
	if PolicyDigest(changes, warned) == PlanDigest(changes) {
		t.Error("violations are not part of the digest")
	}
}
