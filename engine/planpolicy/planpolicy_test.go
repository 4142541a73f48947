package planpolicy

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func deployment(ns, name string, limits bool) Resource {
	container := map[string]any{"name": "app", "image": "nginx"}
	if limits {
		container["resources"] = map[string]any{"limits": map[string]any{"cpu": "1"}}
	}
	return Resource{
		ID: "apps/v1:Deployment:" + ns + ":" + name, Kind: "Deployment", Namespace: ns, Name: name,
		Labels: map[string]string{"team": "web"}, Action: ActionCreate,
		Desired: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"team": "web"}},
			"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{
				"containers": []any{container}}}}},
	}
}

var limitsRule = Rule{
	Name: "limits", Match: Selector{Kinds: []string{"Deployment"}, Namespaces: []string{"prod"}},
	Expression: `desired.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits))`,
	Message:    "every container needs resource limits", Effect: Deny,
}

func TestDenyNamesResourceRuleAndMessage(t *testing.T) {
	set, err := Compile([]Rule{limitsRule}, "workspace prod")
	if err != nil {
		t.Fatal(err)
	}
	res := set.Evaluate([]Resource{deployment("prod", "web", false), deployment("prod", "api", true), deployment("dev", "web", false)})
	if len(res.Violations) != 1 {
		t.Fatalf("violations: %+v, want one (prod/web)", res.Violations)
	}
	err = res.Denied()
	var denied *DeniedError
	if !errors.As(err, &denied) {
		t.Fatalf("Denied() = %v, want a *DeniedError", err)
	}
	for _, want := range []string{"apps/v1:Deployment:prod:web", "rule limits", "every container needs resource limits"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestSelectorActionsAndLabels(t *testing.T) {
	rule := Rule{Name: "no-delete", Match: Selector{Actions: []string{ActionDelete}, Labels: map[string]string{"team": "web"}},
		Expression: "false", Message: "web resources are not deleted", Effect: Warn}
	set, err := Compile([]Rule{rule}, "f")
	if err != nil {
		t.Fatal(err)
	}
	create := deployment("prod", "a", true)
	del := deployment("prod", "b", true)
	del.Action, del.Live, del.Desired = ActionDelete, del.Desired, nil
	other := deployment("prod", "c", true)
	other.Action, other.Labels = ActionDelete, map[string]string{"team": "db"}
	res := set.Evaluate([]Resource{create, del, other})
	if len(res.Violations) != 1 || res.Violations[0].Resource != del.ID || res.Violations[0].Effect != Warn {
		t.Fatalf("violations %+v, want one warn for %s", res.Violations, del.ID)
	}
	if res.Denied() != nil {
		t.Errorf("a warn denied: %v", res.Denied())
	}
}

func TestVariables(t *testing.T) {
	r := deployment("prod", "web", true)
	r.Action, r.Paths = ActionUpdate, []string{"spec.replicas"}
	r.Live = map[string]any{"spec": map[string]any{"replicas": int64(5)}}
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{`action == "update"`, true},
		{`"spec.replicas" in paths`, true},
		{`live.spec.replicas > desired.spec.replicas`, true},
		{`resource.kind == "Deployment" && resource.namespace == "prod" && resource.labels.team == "web"`, true},
		{`resource.id.startsWith("apps/v1:")`, true},
		{`desired == null`, false},
	} {
		set, err := Compile([]Rule{{Name: "r", Expression: tc.expr, Message: "m", Effect: Warn}}, "f")
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		got := len(set.Evaluate([]Resource{r}).Violations) == 0
		if got != tc.want {
			t.Errorf("%s held = %v, want %v", tc.expr, got, tc.want)
		}
	}
}

func TestEvaluationErrorFailsClosed(t *testing.T) {
	set, err := Compile([]Rule{{Name: "r", Expression: `desired.spec.missing == 1`, Message: "m", Effect: Deny}}, "f")
	if err != nil {
		t.Fatal(err)
	}
	res := set.Evaluate([]Resource{deployment("prod", "web", true)})
	if len(res.Violations) != 1 || !strings.Contains(res.Violations[0].Message, "could not be evaluated") {
		t.Fatalf("violations %+v, want one saying the expression could not be evaluated", res.Violations)
	}
}

func TestCostLimit(t *testing.T) {
	set, err := Compile([]Rule{{Name: "costly", Expression: `[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))`,
		Message: "m", Effect: Deny}}, "f")
	if err != nil {
		t.Fatal(err)
	}
	res := set.Evaluate([]Resource{deployment("prod", "web", true)})
	if len(res.Violations) != 1 || !strings.Contains(res.Violations[0].Message, "cost limit") {
		t.Fatalf("violations %+v, want one over the cost limit", res.Violations)
	}
}

func TestCompileErrorsNameSourceAndRule(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		want string
	}{
		{Rule{Name: "bad", Expression: "desired.spec. ==", Message: "m", Effect: Deny}, `ws.yaml: policies[0] "bad": expression: ERROR`},
		{Rule{Name: "str", Expression: `"x"`, Message: "m", Effect: Deny}, `policies[0] "str": expression: evaluates to string`},
		{Rule{Name: "eff", Expression: "true", Message: "m", Effect: "block"}, `"eff": effect: "block"`},
		{Rule{Name: "msg", Expression: "true", Effect: Warn}, `"msg": message: missing`},
		{Rule{Name: "act", Expression: "true", Message: "m", Effect: Warn, Match: Selector{Actions: []string{"adopt"}}}, `match.actions[0]: "adopt"`},
		{Rule{Name: "grp", Expression: "true", Message: "m", Effect: Warn, Group: "sre"}, "approvers and group are for effect require-approval only"},
		{Rule{Expression: "true", Message: "m", Effect: Warn}, "policies[0]: name: missing"},
	} {
		_, err := Compile([]Rule{tc.rule}, "ws.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%+v) = %v, want an error with %q", tc.rule, err, tc.want)
		}
	}
	_, err := Compile([]Rule{{Name: "a", Expression: "true", Message: "m", Effect: Warn}, {Name: "a", Expression: "true", Message: "m", Effect: Warn}}, "f")
	if err == nil || !strings.Contains(err.Error(), "names must be unique") {
		t.Errorf("duplicate names: %v", err)
	}
}

func TestParseFile(t *testing.T) {
	set, rules, err := ParseFile([]byte(`policies:
  - name: two-for-pvc-deletes
    match: {kinds: [PersistentVolumeClaim], actions: [delete]}
    expression: "false"
    message: deleting a volume claim needs two approvals
    effect: require-approval
    approvers: 2
    group: dba
`), "/etc/kumo/policies.yaml")
	if err != nil || set.Len() != 1 || rules[0].Approvers != 2 {
		t.Fatalf("ParseFile = %v, %+v, %v", set.Len(), rules, err)
	}
	pvc := Resource{ID: "v1:PersistentVolumeClaim:db:data", Kind: "PersistentVolumeClaim", Namespace: "db", Action: ActionDelete}
	n, groups := set.Evaluate([]Resource{pvc}).Approval()
	if n != 2 || len(groups) != 1 || groups[0] != "dba" {
		t.Errorf("Approval() = %d, %v; want 2, [dba]", n, groups)
	}
	if _, _, err := ParseFile([]byte("policies:\n  - name: x\n    selector: {}\n"), "p.yaml"); err == nil || !strings.Contains(err.Error(), "p.yaml") || !strings.Contains(err.Error(), "selector") {
		t.Errorf("unknown field: %v, want an error naming the file and the field", err)
	}
}

func TestCanonicalIgnoresOrder(t *testing.T) {
	a := Results{Violations: []Violation{{Resource: "b", Rule: "r"}, {Resource: "a", Rule: "r"}}}
	b := Results{Violations: []Violation{{Resource: "a", Rule: "r"}, {Resource: "b", Rule: "r"}}}
	if string(a.Canonical()) != string(b.Canonical()) {
		t.Errorf("canonical forms differ by order")
	}
	c := Results{Violations: []Violation{{Resource: "a", Rule: "r", Source: "/etc/kumo/p.yaml"}, {Resource: "b", Rule: "r", Source: "/srv/p.yaml"}}}
	if string(a.Canonical()) != string(c.Canonical()) {
		t.Errorf("canonical forms differ by where the rules came from")
	}
	d := Results{Violations: []Violation{{Resource: "a", Rule: "r", Message: "other"}, {Resource: "b", Rule: "r"}}}
	if string(a.Canonical()) == string(d.Canonical()) {
		t.Errorf("canonical forms do not tell another message")
	}
}

// BenchmarkEvaluate is five rules over the 2,000 changes of a large plan:
// what policies add to its preview.
func BenchmarkEvaluate(b *testing.B) {
	rules := []Rule{
		limitsRule,
		{Name: "no-lb", Match: Selector{Kinds: []string{"Service"}}, Expression: `!has(desired.spec.type) || desired.spec.type != "LoadBalancer"`, Message: "no LoadBalancer", Effect: Deny},
		{Name: "replicas", Match: Selector{Kinds: []string{"Deployment"}}, Expression: `desired == null || desired.spec.replicas <= 10`, Message: "at most 10 replicas", Effect: Warn},
		{Name: "team-label", Expression: `"team" in resource.labels`, Message: "a team label", Effect: Warn},
		{Name: "pvc-delete", Match: Selector{Kinds: []string{"PersistentVolumeClaim"}, Actions: []string{ActionDelete}}, Expression: "false", Message: "two approvals", Effect: RequireApproval, Approvers: 2},
	}
	set, err := Compile(rules, "bench")
	if err != nil {
		b.Fatal(err)
	}
	resources := make([]Resource, 2000)
	for i := range resources {
		resources[i] = deployment("prod", fmt.Sprintf("web-%d", i), true)
	}
	b.ReportAllocs()
	for b.Loop() {
		if res := set.Evaluate(resources); len(res.Violations) != 0 {
			b.Fatalf("violations: %v", res.Violations[0])
		}
	}
}
