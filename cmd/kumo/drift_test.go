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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/internal/terraformtest"
)

func driftSpec(ns string) string {
	return webSpec(ns, 2, false) + fmt.Sprintf(`- id: v1:ConfigMap:%[1]s:settings
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings, namespace: %[1]s}
    data: {color: blue, size: m}
`, ns)
}

func (e *env) driftCheck(wantCode int, extra ...string) *drift.Report {
	e.t.Helper()
	r := e.run(append([]string{"drift", "check", "--workspace", "dev", "-o", "json"}, extra...)...)
	if r.code != wantCode {
		e.t.Fatalf("drift check: exit %d, want %d: %s", r.code, wantCode, r)
	}
	if wantCode == 2 && strings.Contains(r.stderr, "Error:") {
		e.t.Errorf("drift check: drift found is a result, printed as an error: %s", r)
	}
	var rep drift.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		e.t.Fatalf("drift check output: %v\n%s", err, r)
	}
	return &rep
}

// TestDriftCheck: right after an apply nothing has drifted (server defaults are
// not drift); after another field manager edits a ConfigMap key and scales the
// Deployment and the Service is deleted, the check names exactly those three
// with paths, values and manager and exits 2; an ignore rule on /spec/replicas
// turns the scale into an ignored difference.
func TestDriftCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ns := e.ns
	e.ok("workspace", "create", "dev", "--file", e.writeSpec("dev.yaml", "context: {}\n"))
	e.ok("apply", "--yes", "--workspace", "dev", "-f", e.writeSpec("spec.yaml", driftSpec(ns)))

	first := e.driftCheck(0)
	if first.Revision != 1 || first.Counts != (drift.Counts{Resources: 4, InSync: 4}) || len(first.Resources) != 0 {
		t.Fatalf("check right after apply: %+v", first)
	}

	if _, err := e.kube.CoreV1().ConfigMaps(ns).Patch(ctx, "settings", types.MergePatchType, []byte(`{"data":{"color":"red"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kube.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "kubectl-scale"}); err != nil {
		t.Fatal(err)
	}
	if err := e.kube.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	second := e.driftCheck(2)
	want := map[string]string{
		"v1:ConfigMap:" + ns + ":settings":  `drifted [/data/color "blue" -> "red" by kubectl-edit]`,
		"apps/v1:Deployment:" + ns + ":web": `drifted [/spec/replicas 2 -> 5 by kubectl-scale]`,
		"v1:Service:" + ns + ":web":         `missing []`,
	}
	if second.Counts != (drift.Counts{Resources: 4, InSync: 1, Drifted: 2, Missing: 1}) || len(second.Resources) != 3 {
		t.Fatalf("check after the changes: %+v", second)
	}
	for _, r := range second.Resources {
		if got := describeResult(r); got != want[r.ID] {
			t.Errorf("%s: %s, want %s", r.ID, got, want[r.ID])
		}
		if r.ConsecutiveChecks != 1 || !r.FirstSeen.Equal(second.CheckTime) {
			t.Errorf("%s: first seen %v, %d checks; want this check's time, 1", r.ID, r.FirstSeen, r.ConsecutiveChecks)
		}
	}
	out := e.ok("release", "list", "--workspace", "dev")
	if !strings.Contains(out.stdout, "succeeded (drifted)") || !strings.Contains(out.stdout, "drift "+e.project+"/dev rev 1: 2 of 4 drifted, 1 missing") {
		t.Errorf("release list does not mark the drift:\n%s", out.stdout)
	}
	table := e.ok("drift", "report", "--workspace", "dev", "--check", second.RunID)
	if !strings.Contains(table.stdout, `/spec/replicas: 2 -> 5 by kubectl-scale`) || !strings.Contains(table.stdout, "missing  v1:Service:"+ns+":web") {
		t.Errorf("drift report:\n%s", table.stdout)
	}

	e.ok("workspace", "update", "dev", "--file", e.writeSpec("dev2.yaml", "drift:\n  ignore:\n  - kind: Deployment\n    jsonPointers: [/spec/replicas]\n"))
	third := e.driftCheck(2)
	if third.Counts != (drift.Counts{Resources: 4, InSync: 2, Drifted: 1, Missing: 1, Ignored: 1}) {
		t.Fatalf("check with the ignore rule: %+v", third)
	}
	for _, r := range third.Resources {
		switch r.ID {
		case "apps/v1:Deployment:" + ns + ":web":
			if r.Status != drift.InSync || len(r.Ignored) != 1 || r.Ignored[0].Path != "/spec/replicas" || r.Ignored[0].Manager != "kubectl-scale" {
				t.Errorf("ignored scale: %+v", r)
			}
		case "v1:ConfigMap:" + ns + ":settings":
			if r.ConsecutiveChecks != 2 || !r.FirstSeen.Equal(second.CheckTime) {
				t.Errorf("configmap drifted since the second check: first seen %v, %d checks", r.FirstSeen, r.ConsecutiveChecks)
			}
		}
	}
	e.fails([]string{"workspace", "update", "dev", "--file", e.writeSpec("bad.yaml", "drift:\n  ignore:\n  - kind: Deployment\n    jsonPointers: [spec/replicas]\n")},
		"bad.yaml: drift.ignore[0]: jsonPointers[0]")
}

func describeResult(r drift.Result) string {
	var fields []string
	for _, f := range r.Fields {
		fields = append(fields, fmt.Sprintf("%s %s -> %s by %s", f.Path, showValue(f.Recorded), showValue(f.Live), f.Manager))
	}
	return fmt.Sprintf("%s [%s]", r.Status, strings.Join(fields, ", "))
}

// TestDriftCheckTerraform: Terraform resources are checked by refreshing their
// recorded state. An object whose file is edited on disk is drifted, naming the
// attribute with its recorded and live values. local_file (provider v1.4.0)
// reads a file whose content no longer matches as gone, so the refresh drops it:
// it is reported missing, never in sync.
func TestDriftCheckTerraform(t *testing.T) {
	t.Parallel()
	e, _ := terraformEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "motd")
	spec := fmt.Sprintf(`resources:
- id: hashicorp:local:local_file:motd
  type: Terraform
  attributes: {filename: %q, content: hello}
  extensions:
    provider: %s
    resourceType: local_file
`, file, terraformtest.LocalProvider) + kumotestObject("obj", dir, "content: mine", "")
	e.ok("workspace", "create", "dev", "--file", e.writeSpec("dev.yaml", testProvidersWorkspace))
	e.ok("apply", "--yes", "--workspace", "dev", "-f", e.writeSpec("spec.yaml", spec))
	if r := e.driftCheck(0); r.Counts != (drift.Counts{Resources: 2, InSync: 2}) {
		t.Fatalf("check right after apply: %+v", r)
	}
	objects := terraformtest.Objects(t, dir)
	for _, f := range []string{file, filepath.Join(dir, objects[0])} {
		if err := os.WriteFile(f, []byte("theirs"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := e.driftCheck(2)
	got := map[string]string{}
	for _, res := range r.Resources {
		got[res.ID] = describeResult(res)
	}
	want := map[string]string{
		"kumoproj:kumotest:kumotest_object:obj": `drifted [/content "mine" -> "theirs" by ]`,
		"hashicorp:local:local_file:motd":       `missing []`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("check after editing the files:\n got  %v\n want %v", got, want)
	}
}

// TestDriftSecretStringData: a Secret applied with stringData (write-only: the
// apiserver keeps only data) and patched out of band through stringData is
// reported by drift check as /data/<key>, by the patcher, with both values
// masked and neither printed; --mode remediate puts the applied value back and
// the next check is in sync.
func TestDriftSecretStringData(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ns := e.ns
	e.ok("workspace", "create", "dev", "--file", e.writeSpec("dev.yaml", "context: {}\n"))
	spec := "resources:\n" + namespace(ns) + fmt.Sprintf(`- id: v1:Secret:%[1]s:db
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: Secret
    metadata: {name: db, namespace: %[1]s}
    stringData: {password: applied-pw-7f3a, user: admin}
`, ns)
	e.ok("apply", "--yes", "--workspace", "dev", "-f", e.writeSpec("spec.yaml", spec))
	if first := e.driftCheck(0); first.Counts != (drift.Counts{Resources: 2, InSync: 2}) {
		t.Fatalf("check right after apply: %+v", first)
	}

	if _, err := e.kube.CoreV1().Secrets(ns).Patch(ctx, "db", types.StrategicMergePatchType, []byte(`{"stringData":{"password":"changed-pw-9c1e"}}`), metav1.PatchOptions{FieldManager: "kubectl-patch"}); err != nil {
		t.Fatal(err)
	}
	r := e.run("drift", "check", "--workspace", "dev", "-o", "json")
	var rep drift.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 2 {
		t.Fatalf("check after the patch: exit %d, %v\n%s", r.code, err, r)
	}
	if len(rep.Resources) != 1 || describeResult(rep.Resources[0]) != `drifted [/data/password (sensitive) -> (sensitive) by kubectl-patch]` {
		t.Errorf("check after the patch: %+v", rep.Resources)
	}
	table := e.ok("drift", "report", "--workspace", "dev", "--check", rep.RunID)
	for _, out := range []string{r.stdout, r.stderr, table.stdout, table.stderr} {
		for _, v := range []string{"applied-pw-7f3a", "changed-pw-9c1e", "YXBwbGllZC1wdy03ZjNh", "Y2hhbmdlZC1wdy05YzFl"} {
			if strings.Contains(out, v) {
				t.Errorf("drift output holds a secret value %q:\n%s", v, out)
			}
		}
	}

	if st := e.driftCheck(2, "--mode", "remediate").Remediation; st == nil || st.Outcome != drift.OutcomeSucceeded {
		t.Fatalf("remediation: %+v", st)
	}
	s, err := e.kube.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil || string(s.Data["password"]) != "applied-pw-7f3a" || string(s.Data["user"]) != "admin" {
		t.Errorf("Secret after the remediation: %v (password restored: %v)", err, err == nil && string(s.Data["password"]) == "applied-pw-7f3a")
	}
	if last := e.driftCheck(0); last.Counts.Drifted != 0 {
		t.Errorf("check after the remediation: %+v", last)
	}
}

// TestIgnoreRulesInPlans: an autoscaler scales a Deployment; without a rule
// the preview would scale it back. With the workspace's drift.ignore on
// /spec/replicas (or on the autoscaler's field manager) the preview shows no
// change there, and an apply that changes the Deployment otherwise leaves
// its replicas as the autoscaler set them.
func TestIgnoreRulesInPlans(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	dep := "apps/v1:Deployment:" + e.ns + ":web"
	spec := e.writeSpec("spec.yaml", webSpec(e.ns, 2, false))
	e.ok("apply", "--yes", "--wait", "applied", "-f", spec)
	scaleTo := func(n int32) {
		t.Helper()
		// As an autoscaler does: read the scale and write it, again when the
		// deployment controller wrote the object in between.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s, err := e.kube.AppsV1().Deployments(e.ns).GetScale(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Spec.Replicas = n
			_, err = e.kube.AppsV1().Deployments(e.ns).UpdateScale(ctx, "web", s, metav1.UpdateOptions{FieldManager: "horizontal-pod-autoscaler"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	replicas := func() int32 {
		t.Helper()
		d, err := e.kube.AppsV1().Deployments(e.ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *d.Spec.Replicas
	}
	scaleTo(5)
	if c := e.preview(spec)[dep]; c.Action != "Update" || !strings.Contains(fmt.Sprint(c.Fields), "spec.replicas") {
		t.Fatalf("without a rule the preview scales back: %+v", c)
	}
	changed := e.writeSpec("changed.yaml", strings.Replace(webSpec(e.ns, 2, false), "image: nginx:1.27", "image: nginx:1.28", 1))
	for _, rule := range []string{"jsonPointers: [/spec/replicas]", "managedFieldsManagers: [horizontal-pod-autoscaler]"} {
		e.ok("workspace", "update", "default", "--file", e.writeSpec("ws.yaml", "drift:\n  ignore:\n  - kind: Deployment\n    "+rule+"\n"))
		if c := e.preview(spec)[dep]; c.Action != "UnChanged" {
			t.Errorf("%s: preview %+v, want the Deployment unchanged", rule, c)
		}
		if c := e.preview(changed)[dep]; c.Action != "Update" || strings.Contains(fmt.Sprint(c.Fields), "replicas") {
			t.Errorf("%s: preview of a new image %+v, want an update of the image only", rule, c)
		}
		e.ok("apply", "--yes", "--wait", "applied", "-f", changed)
		if n := replicas(); n != 5 {
			t.Errorf("%s: after the apply the Deployment has %d replicas, want the autoscaler's 5", rule, n)
		}
		e.ok("apply", "--yes", "--wait", "applied", "-f", spec) // back to the first image
	}
}
