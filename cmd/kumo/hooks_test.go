package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Hook Jobs complete as every Job of this testbed does: kwok runs the Job's
// Pod to completion (its pod-complete stage, for Pods a Job owns) and the
// controller manager's job controller marks the Job Complete. A hook that
// must fail is a Job whose Pod can never be scheduled (a node selector no
// node has) with activeDeadlineSeconds: the job controller marks it Failed
// (DeadlineExceeded), as it would on a real cluster.

// hookJob is a Job manifest in namespace ns with annotations.
func hookJob(ns, name string, fail bool, annotations map[string]string) string {
	var ann []string
	for k, v := range annotations {
		ann = append(ann, fmt.Sprintf("%q: %q", k, v))
	}
	slices.Sort(ann)
	extra := ""
	if fail {
		extra = "  activeDeadlineSeconds: 2\n"
	}
	pod := "      restartPolicy: Never\n"
	if fail {
		pod += "      nodeSelector: {kumo-test/no-such-node: \"yes\"}\n"
	}
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  namespace: %s
  annotations: {%s}
spec:
  backoffLimit: 0
%s  template:
    spec:
%s      containers:
      - {name: run, image: example.com/hook:v1}
`, name, ns, strings.Join(ann, ", "), extra, pod)
}

// jobUID returns the UID of Job name, "" when there is none.
func (e *env) jobUID(name string) (string, *batchv1.Job) {
	e.t.Helper()
	j, err := e.kube.BatchV1().Jobs(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return string(j.UID), j
}

// releaseHooks returns the hooks a release recorded, as "point event id outcome [deleted]".
func releaseHooks(t *testing.T, rel map[string]any) []string {
	t.Helper()
	var out []string
	hooks, _ := rel["hooks"].([]any)
	for _, h := range hooks {
		m := h.(map[string]any)
		s := fmt.Sprintf("%s %s %s %s", m["point"], m["event"], m["id"], m["outcome"])
		if m["deleted"] == true {
			s += " deleted"
		}
		out = append(out, s)
	}
	return out
}

// stateIDs lists the resource IDs a release recorded as its state.
func stateIDs(rel map[string]any) []string {
	var ids []string
	st, _ := rel["state"].(map[string]any)
	rs, _ := st["resources"].([]any)
	for _, r := range rs {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	return ids
}

// Argo CD hooks across two applies: the PreSync Job completes before the
// wave-ordered objects are applied and is re-run by the next apply (deleted
// first: BeforeHookCreation, the default); the PostSync Job runs once they
// are healthy and is deleted once it succeeded (HookSucceeded); the SyncFail
// hook does not run. Hooks are recorded on the release, never in its state:
// not pruned, not in drift.
func TestApplyArgoHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createNamespace()
	ctx := context.Background()
	ns := e.ns
	manifest := strings.Join([]string{
		fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {a: b}\n", ns),
		hookJob(ns, "migrate", false, map[string]string{"argocd.argoproj.io/hook": "PreSync"}),
		hookJob(ns, "smoke", false, map[string]string{"argocd.argoproj.io/hook": "PostSync", "argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}),
		hookJob(ns, "page", false, map[string]string{"argocd.argoproj.io/hook": "SyncFail"}),
	}, "---\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	conv := e.ok("spec", "convert", "-f", dir).stdout
	resources, hooks, _ := strings.Cut(conv, "\nhooks:\n")
	if strings.Contains(resources, "batch/v1:Job:") || !strings.Contains(hooks, "- id: batch/v1:Job:"+ns+":migrate\n  events:\n  - PreSync\n") {
		t.Errorf("spec convert: the Jobs are not hooks, or are resources too:\n%s", conv)
	}

	e.ok("apply", "--yes", "-f", dir)
	uid1, job := e.jobUID("migrate")
	if job == nil || job.Status.Succeeded < 1 {
		t.Fatalf("the PreSync Job did not run to completion: %+v", job)
	}
	cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status.CompletionTime == nil || cm.CreationTimestamp.Before(job.Status.CompletionTime) {
		t.Errorf("the ConfigMap was created at %v, before the PreSync Job completed at %v", cm.CreationTimestamp, job.Status.CompletionTime)
	}
	if uid, _ := e.jobUID("smoke"); uid != "" {
		t.Errorf("the PostSync Job is still there: its policy HookSucceeded deletes it")
	}
	if uid, _ := e.jobUID("page"); uid != "" {
		t.Errorf("the SyncFail Job ran on a sync that succeeded")
	}
	rel := e.release(1)
	want := []string{
		"pre PreSync batch/v1:Job:" + ns + ":migrate succeeded",
		"post PostSync batch/v1:Job:" + ns + ":smoke succeeded deleted",
	}
	if got := releaseHooks(t, rel); !slices.Equal(got, want) {
		t.Errorf("release 1 hooks %q, want %q", got, want)
	}
	if ids := stateIDs(rel); !slices.Equal(ids, []string{"v1:ConfigMap:" + ns + ":settings"}) {
		t.Errorf("release 1 state %v, want the ConfigMap alone", ids)
	}

	// The second apply re-runs the hooks: the PreSync Job is a new object.
	e.ok("apply", "--yes", "-f", dir)
	uid2, job2 := e.jobUID("migrate")
	if uid2 == "" || uid2 == uid1 || job2.Status.Succeeded < 1 {
		t.Errorf("the PreSync Job was not re-run: UID %s (was %s), %+v", uid2, uid1, job2)
	}
	if got := releaseHooks(t, e.release(2)); !slices.Equal(got, want) {
		t.Errorf("release 2 hooks %q, want %q", got, want)
	}
	// Nothing to change; the hook Job left live is no drift.
	for _, c := range parseChanges(t, e.ok("preview", "-f", dir, "-o", "json").stdout) {
		if c.Action != "UnChanged" {
			t.Errorf("re-preview: %s %s %+v", c.ID, c.Action, c.Fields)
		}
	}
	if r := e.run("drift", "check"); r.code != 0 || strings.Contains(r.stdout, "Job") {
		t.Errorf("drift check: %s", r)
	}
	// Without the hooks in the manifest, the next apply prunes nothing of
	// them: the Job is not a resource of the release.
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(strings.SplitN(manifest, "---\n", 2)[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("apply", "--yes", "-f", dir)
	if uid, _ := e.jobUID("migrate"); uid != uid2 {
		t.Errorf("an apply without the hook deleted or replaced it: UID %s, was %s", uid, uid2)
	}
}

// A PreSync hook that fails fails the run before anything else is applied,
// and the SyncFail hook runs.
func TestApplyFailingPreSyncHook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createNamespace()
	ctx := context.Background()
	ns := e.ns
	manifest := strings.Join([]string{
		fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {a: b}\n", ns),
		hookJob(ns, "migrate", true, map[string]string{"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation"}),
		hookJob(ns, "page", false, map[string]string{"argocd.argoproj.io/hook": "SyncFail"}),
	}, "---\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	e.fails([]string{"apply", "--yes", "-f", dir}, "pre hook failed", "batch/v1:Job:"+ns+":migrate")
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap was applied after its PreSync hook failed: %v", err)
	}
	if uid, job := e.jobUID("page"); uid == "" || job.Status.Succeeded < 1 {
		t.Errorf("the SyncFail Job did not run: %+v", job)
	}
	rel := e.release(1)
	if rel["phase"] != "failed" {
		t.Errorf("release phase %v", rel["phase"])
	}
	want := []string{
		"pre PreSync batch/v1:Job:" + ns + ":migrate failed",
		"fail SyncFail batch/v1:Job:" + ns + ":page succeeded",
	}
	if got := releaseHooks(t, rel); !slices.Equal(got, want) {
		t.Errorf("release hooks %q, want %q", got, want)
	}
}

// hookedChart is engine/chart's chart with a hook for each Helm event.
var hookedChart = filepath.Join("..", "..", "engine", "chart", "testdata", "hooked")

// Helm hooks of a chart: installed (pre-install hooks by weight, the setup
// Job deleted once it succeeded), upgraded (post-upgrade, not pre-install),
// tested (kumo test), rolled back (pre-rollback), tested failing, destroyed
// (pre-delete before, post-delete after), and installed again (pre-install
// again: the stack was destroyed).
func TestChartHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createNamespace()
	ctx := context.Background()
	ns := e.ns
	id := func(kind, name string) string {
		if kind == "Job" {
			return "batch/v1:Job:" + ns + ":hooked-" + name
		}
		return "v1:" + kind + ":" + ns + ":hooked-" + name
	}
	check := func(rev int, want ...string) {
		t.Helper()
		if got := releaseHooks(t, e.release(rev)); !slices.Equal(got, want) {
			t.Errorf("release %d hooks:\n got %q\nwant %q", rev, got, want)
		}
	}

	e.ok("apply", "--yes", "--chart", hookedChart, "-n", ns)
	check(1, "pre pre-install "+id("ConfigMap", "hook-order")+" succeeded", "pre pre-install "+id("Job", "setup")+" succeeded deleted")
	if uid, _ := e.jobUID("hooked-setup"); uid != "" {
		t.Errorf("the setup Job is still there: hook-succeeded deletes it")
	}
	order, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "hooked-hook-order", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the weight -10 pre-install hook: %v", err)
	}
	settings, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "hooked-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if settings.CreationTimestamp.Before(&order.CreationTimestamp) {
		t.Errorf("the chart's ConfigMap was created before its pre-install hook")
	}
	if ids := stateIDs(e.release(1)); !slices.Equal(ids, []string{"v1:ConfigMap:" + ns + ":hooked-settings"}) {
		t.Errorf("release 1 state %v, want the chart's ConfigMap alone", ids)
	}

	e.ok("apply", "--yes", "--chart", hookedChart, "-n", ns, "--set", "message=v2")
	check(2, "post post-upgrade "+id("Job", "post-upgrade")+" succeeded")
	if uid, job := e.jobUID("hooked-post-upgrade"); uid == "" || job.Status.Succeeded < 1 {
		t.Errorf("the post-upgrade Job did not run: %+v", job)
	}

	// kumo test runs the test Job of the latest release, as helm test does.
	r := e.ok("test")
	if !strings.Contains(r.stdout, "Tests of revision 2:") || !strings.Contains(r.stdout, "succeeded "+id("Job", "test")) {
		t.Errorf("kumo test:\n%s", r.stdout)
	}
	if uid, job := e.jobUID("hooked-test"); uid == "" || job.Status.Succeeded < 1 || job.Spec.Template.Spec.Containers[0].Args[0] != "v2" {
		t.Errorf("the test Job of revision 2 did not run: %+v", job)
	}

	e.ok("rollback", "--yes")
	check(3, "pre pre-rollback "+id("Job", "pre-rollback")+" succeeded deleted")
	if cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "hooked-settings", metav1.GetOptions{}); err != nil || cm.Data["message"] != "hello" {
		t.Errorf("rollback: %v %v", cm.Data, err)
	}

	// A test that fails: kumo test says which, and exits non-zero.
	e.ok("apply", "--yes", "--chart", hookedChart, "-n", ns, "--set", "failTest=true")
	check(4, "post post-upgrade "+id("Job", "post-upgrade")+" succeeded")
	r = e.fails([]string{"test"}, "test hook failed", id("Job", "test"))
	if !strings.Contains(r.stdout, "failed    "+id("Job", "test")) {
		t.Errorf("kumo test of a failing test:\n%s", r)
	}

	e.ok("destroy", "--yes")
	check(5, "pre pre-delete "+id("Job", "pre-delete")+" succeeded", "post post-delete "+id("ConfigMap", "post-delete")+" succeeded")
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "hooked-settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's ConfigMap after destroy: %v", err)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "hooked-post-delete", metav1.GetOptions{}); err != nil {
		t.Errorf("the post-delete hook: %v", err)
	}

	// After a destroy the next apply is an install again.
	e.fails([]string{"test"}, "nothing to test: revision 5 of "+e.project+"/")
	e.ok("apply", "--yes", "--chart", hookedChart, "-n", ns)
	check(6, "pre pre-install "+id("ConfigMap", "hook-order")+" succeeded", "pre pre-install "+id("Job", "setup")+" succeeded deleted")
}
