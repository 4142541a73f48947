package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/internal/tlstest"
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

// TestPlanPolicyRequiresApproval: on a kumo server started with
// --plan-policies, a require-approval rule (two approvers) makes an apply
// started with --yes wait: the starter's --yes counts once, the starter may
// not approve again, and the run applies only once a second approver (bob,
// with a kumo token granting the approver role) approves.
func TestPlanPolicyRequiresApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := strings.TrimSpace(e.runNoCluster("token", "create", "--subject", "bob", "--ttl", "1h").stdout)
	address := freeAddress(t)
	ca := tlstest.NewCA(t, "operator")
	srvPair, laptop := ca.Issue(t, "frontend"), ca.Issue(t, "bob-laptop")
	dir := t.TempDir()
	grants := filepath.Join(dir, "policy.yaml")
	planPolicies := filepath.Join(dir, "plan-policies.yaml")
	for path, text := range map[string]string{
		grants: "grants:\n  - role: approver\n    subjects: [\"token:bob\"]\n    scopes: [\"*/*\"]\n",
		planPolicies: `policies:
  - name: two-approvers-for-unlabelled-config
    match: {kinds: [ConfigMap], actions: [create]}
    expression: '"approved-by" in resource.labels'
    message: a ConfigMap without an approved-by label needs two approvers
    effect: require-approval
    approvers: 2
`,
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.serverRecorded("server", "--address", address, "--headless", "--policy", grants, "--kumo-tokens", "--plan-policies", planPolicies,
		"--tls-cert", srvPair.CertFile, "--tls-key", srvPair.KeyFile, "--tls-client-ca", ca.CertFile)

	r := e.ok("apply", "-f", e.approvalSpec("one"), "--yes", "--detach")
	waitFor(t, "revision 1 to await approval", time.Minute, func() bool {
		rows := e.releases()
		return len(rows) == 1 && rows[0].Phase == "awaiting-approval"
	})
	runID, _ := e.release(1)["runID"].(string)
	if _, live := e.liveValue(); live {
		t.Fatalf("the ConfigMap was applied before its second approval (%s)", r)
	}
	show := e.ok("run", "show", runID).stdout
	if !strings.Contains(show, "rule two-approvers-for-unlabelled-config") || !strings.Contains(show, "requires 2 approvers") {
		t.Errorf("run show does not show the require-approval violation: %s", show)
	}
	e.fails([]string{"approve", runID}, "already approved it; it needs 2 distinct approvers")

	bob := &env{t: t, home: t.TempDir(), project: e.project, environ: []string{"KUMO_TOKEN=" + tok}, flags: []string{
		"--temporal-address", address, "--tls-cert-path", laptop.CertFile, "--tls-key-path", laptop.KeyFile,
		"--tls-ca-path", ca.CertFile, "--tls-server-name", "localhost", "--codec-key-file", filepath.Join(e.home, "codec.keys"),
	}}
	if r := bob.runNoCluster("approve", runID); r.code != 0 {
		t.Fatalf("bob's approval: %s", r)
	}
	waitFor(t, "revision 1 to succeed", time.Minute, func() bool {
		return e.releases()[0].Phase == "succeeded"
	})
	if v, ok := e.liveValue(); !ok || v != "one" {
		t.Errorf("live value %q (exists %v) after two approvals, want one", v, ok)
	}
}
