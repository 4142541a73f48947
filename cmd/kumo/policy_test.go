package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// policyWorkspace is a workspace file whose policies deny LoadBalancer
// Services and warn about ConfigMaps without a team label.
const policyWorkspace = `policies:
  - name: no-load-balancers
    match: {kinds: [Service], actions: [create, update]}
    expression: '!has(desired.spec.type) || desired.spec.type != "LoadBalancer"'
    message: LoadBalancer Services are not allowed here
    effect: deny
  - name: team-label
    match: {kinds: [ConfigMap]}
    expression: '"team" in resource.labels'
    message: every ConfigMap names its team
    effect: warn
`

func (e *env) loadBalancer(name string) string {
	return fmt.Sprintf(`- id: v1:Service:%[1]s:%[2]s
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: Service
    metadata: {name: %[2]s, namespace: %[1]s}
    spec: {type: LoadBalancer, ports: [{port: 80}], selector: {app: %[2]s}}
`, e.ns, name)
}

// TestPlanPolicies: a workspace's policies are checked on the plan after its
// preview: a deny fails the apply before anything is created, naming the
// resource, the rule and its message; a warn is shown by the preview, the
// apply and `run show`, and the run goes on. A rule with a CEL syntax error
// is refused when the workspace is saved, and `kumo policy test` evaluates
// a spec without a cluster.
func TestPlanPolicies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bad := e.writeSpec("bad-ws.yaml", "policies:\n  - name: broken-rule\n    expression: 'desired.spec.type =='\n    message: m\n    effect: deny\n")
	e.fails([]string{"workspace", "create", "prod", "-f", bad}, `policies[0] "broken-rule": expression:`)
	e.ok("workspace", "create", "prod", "-f", e.writeSpec("prod-ws.yaml", policyWorkspace))

	// Deny: nothing is applied, the error names resource, rule and message.
	denied := e.writeSpec("denied.yaml", "resources:\n"+namespace(e.ns)+configMap(e.ns, "a", "dependsOn: [v1:Namespace:"+e.ns+"]")+e.loadBalancer("web"))
	lb := fmt.Sprintf("v1:Service:%s:web: rule no-load-balancers: LoadBalancer Services are not allowed here", e.ns)
	r := e.fails([]string{"apply", "-w", "prod", "-f", denied, "--yes"}, "denied by policy", lb)
	if !strings.Contains(r.stdout, "deny") || !strings.Contains(r.stdout, "rule team-label") {
		t.Errorf("the denied apply's output does not list the violations: %s", r)
	}
	if _, err := e.kube.CoreV1().Namespaces().Get(context.Background(), e.ns, metav1.GetOptions{}); err == nil {
		if cms := e.configMapNames(); len(cms) != 0 {
			t.Errorf("a denied apply created ConfigMaps %v", cms)
		}
		if svcs, err := e.kube.CoreV1().Services(e.ns).List(context.Background(), metav1.ListOptions{}); err != nil || len(svcs.Items) != 0 {
			t.Errorf("a denied apply created Services: %v (%v)", svcs, err)
		}
	}
	rel := e.ok("release", "show", "-w", "prod", "-o", "json").stdout
	if !strings.Contains(rel, `"phase": "failed"`) || !strings.Contains(rel, "rule no-load-balancers") {
		t.Errorf("the denied release: %s", rel)
	}
	e.fails([]string{"preview", "-w", "prod", "-f", denied}, lb)

	// Warn: shown, and the apply goes on.
	warned := e.writeSpec("warned.yaml", "resources:\n"+namespace(e.ns)+configMap(e.ns, "a", "dependsOn: [v1:Namespace:"+e.ns+"]"))
	warning := fmt.Sprintf("warn             v1:ConfigMap:%s:a: rule team-label: every ConfigMap names its team", e.ns)
	if r := e.ok("preview", "-w", "prod", "-f", warned); !strings.Contains(r.stdout, warning) {
		t.Errorf("preview does not show the warning %q: %s", warning, r)
	}
	r = e.ok("apply", "-w", "prod", "-f", warned, "--yes")
	if !strings.Contains(r.stdout, warning) {
		t.Errorf("apply does not show the warning %q: %s", warning, r)
	}
	if names := e.configMapNames(); len(names) != 1 {
		t.Errorf("a warned apply created %v, want ConfigMap a", names)
	}
	runID, _ := e.ok("release", "show", "-w", "prod", "-o", "json").stdoutJSON(t)["runID"].(string)
	if show := e.ok("run", "show", runID).stdout; !strings.Contains(show, warning) {
		t.Errorf("run show does not show the warning: %s", show)
	}
	var details struct {
		Policies []struct{ Resource, Rule, Effect string }
	}
	if err := json.Unmarshal([]byte(e.ok("run", "show", runID, "-o", "json").stdout), &details); err != nil ||
		len(details.Policies) != 1 || details.Policies[0].Rule != "team-label" || details.Policies[0].Effect != "warn" {
		t.Errorf("run show -o json policies: %+v (%v)", details.Policies, err)
	}

	// policy test: offline, every resource a create; a deny exits non-zero.
	policies := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(policies, []byte(policyWorkspace), 0o600); err != nil {
		t.Fatal(err)
	}
	offline := &env{t: t, home: t.TempDir(), project: "p"}
	r = offline.runNoCluster("policy", "test", "-f", denied, "--policies", policies)
	if r.code == 0 || !strings.Contains(r.stderr, lb) || !strings.Contains(r.stdout, "2 violations") {
		t.Errorf("policy test of a denied spec: %s", r)
	}
	if r = offline.runNoCluster("policy", "test", "-f", warned, "--policies", policies); r.code != 0 || !strings.Contains(r.stdout, warning) {
		t.Errorf("policy test of a warned spec: %s", r)
	}
}

func (r result) stdoutJSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	return m
}
