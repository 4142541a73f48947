package engine

import (
	"fmt"
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

// BenchmarkPolicies2000 is what policies add to the preview of a plan of
// 2,000 creates: each change as rules see it (PolicyResource), then five
// rules over all of them. Compare with a 2,000-resource preview (bench/,
// flat-2000).
func BenchmarkPolicies2000(b *testing.B) {
	set, err := planpolicy.Compile([]planpolicy.Rule{
		{Name: "limits", Match: planpolicy.Selector{Kinds: []string{"Deployment"}}, Expression: `desired.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits))`, Message: "limits", Effect: planpolicy.Deny},
		{Name: "no-lb", Match: planpolicy.Selector{Kinds: []string{"Service"}}, Expression: `!has(desired.spec.type) || desired.spec.type != "LoadBalancer"`, Message: "no LoadBalancer", Effect: planpolicy.Deny},
		{Name: "replicas", Match: planpolicy.Selector{Kinds: []string{"Deployment"}}, Expression: `desired == null || desired.spec.replicas <= 10`, Message: "at most 10", Effect: planpolicy.Warn},
		{Name: "team", Expression: `"team" in resource.labels`, Message: "a team label", Effect: planpolicy.Warn},
		{Name: "pvc", Match: planpolicy.Selector{Kinds: []string{"PersistentVolumeClaim"}, Actions: []string{planpolicy.ActionDelete}}, Expression: "false", Message: "two approvals", Effect: planpolicy.RequireApproval, Approvers: 2},
	}, "bench")
	if err != nil {
		b.Fatal(err)
	}
	const n = 2000
	changes, desired := make([]Change, n), make([]*Resource, n)
	for i := range n {
		name := fmt.Sprintf("web-%04d", i)
		id := KubernetesID("apps/v1", "Deployment", "prod", name)
		changes[i] = Change{ID: id, Type: Kubernetes, Action: Create}
		desired[i] = &Resource{ID: id, Type: Kubernetes, Attributes: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": "prod", "labels": map[string]any{"team": "web"}},
			"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "nginx", "resources": map[string]any{"limits": map[string]any{"cpu": "1"}}}}}}}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		rs := make([]planpolicy.Resource, n)
		for i := range changes {
			rs[i] = PolicyResource(changes[i], desired[i], nil)
		}
		if res := set.Evaluate(rs); len(res.Violations) != 0 {
			b.Fatal(res.Violations[0])
		}
	}
}
