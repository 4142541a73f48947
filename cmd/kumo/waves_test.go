package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kumoproj/kumo/internal/localcluster"
)

// admissionInstall is the shape of ingress-nginx's install in namespace ns:
// a ValidatingWebhookConfiguration (the last kind tier) and the
// admission-patch Job (a workload) that patches its caBundle, and exits with
// an error, retried, while it does not exist. The Job's Pods select the node
// label label: kwok runs no container, so the test plays the Pod's part (it
// patches the webhook configuration, then lets the Pod run by labelling the
// node). The webhook only ever concerns this namespace and fails open.
func admissionInstall(ns, label string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s, labels: {kumo-test-admission: %[1]s}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: admission, namespace: %[1]s}
---
apiVersion: batch/v1
kind: Job
metadata: {name: admission-patch, namespace: %[1]s}
spec:
  backoffLimit: 6
  template:
    spec:
      serviceAccountName: admission
      restartPolicy: OnFailure
      nodeSelector: {%[2]s: "yes"}
      containers:
      - {name: patch, image: registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1.5.2, args: [patch, --webhook-name=%[1]s-admission]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: %[1]s-admission}
webhooks:
- name: validate.%[1]s.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  namespaceSelector: {matchLabels: {kumo-test-admission: %[1]s}}
  rules:
  - {apiGroups: [networking.k8s.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [ingresses]}
  clientConfig:
    service: {name: admission, namespace: %[1]s, path: /validate}
`, ns, label)
}

// The ingress-nginx pattern installs: without sync waves a manifest set is
// one wave, so the webhook configuration is applied while the Job waits to
// complete, and the Job (which needs it) completes. Before waves, kumo held
// the webhook configuration until the Job was healthy: a deadlock, the apply
// failing at its timeout.
func TestApplyJobThatNeedsALaterKind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	label := "kumo-test/" + e.ns
	t.Cleanup(func() {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, label)
		_, _ = e.kube.CoreV1().Nodes().Patch(context.Background(), localcluster.NodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		_ = e.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), e.ns+"-admission", metav1.DeleteOptions{})
	})
	// The Job's Pod: once the webhook configuration exists, patch its
	// caBundle and complete.
	played := make(chan error, 1)
	pctx, stop := context.WithTimeout(ctx, 3*time.Minute)
	defer stop()
	go func() {
		for pctx.Err() == nil {
			_, err := e.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(pctx, e.ns+"-admission", metav1.GetOptions{})
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			patch := `[{"op":"add","path":"/webhooks/0/clientConfig/caBundle","value":"Y2EK"}]`
			if _, err := e.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(pctx, e.ns+"-admission", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				played <- fmt.Errorf("patch the webhook configuration: %w", err)
				return
			}
			patch = fmt.Sprintf(`{"metadata":{"labels":{%q:"yes"}}}`, label)
			_, err = e.kube.CoreV1().Nodes().Patch(pctx, localcluster.NodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			played <- err
			return
		}
		played <- fmt.Errorf("the webhook configuration was never created: %w", pctx.Err())
	}()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "install.yaml"), []byte(admissionInstall(e.ns, label)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run("apply", "--yes", "--timeout", "90s", "-f", dir)
	if r.code != 0 {
		t.Fatalf("the install did not complete: %s", r)
	}
	if err := <-played; err != nil {
		t.Fatal(err)
	}
	job, err := e.kube.BatchV1().Jobs(e.ns).Get(ctx, "admission-patch", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status.Succeeded < 1 {
		t.Errorf("the Job did not complete: %+v", job.Status)
	}
	if !strings.Contains(r.stdout, "batch/v1:Job:"+e.ns+":admission-patch") || !strings.Contains(r.stdout, "Healthy") {
		t.Errorf("the apply does not show the Job waited for:\n%s", r.stdout)
	}
	if rows := e.releases(); len(rows) != 1 || rows[0].Phase != "succeeded" {
		t.Errorf("releases = %+v", rows)
	}
}

// Sync waves: a wave starts once the previous one is healthy. The
// Deployment of wave 0 is Available before the ConfigMap of wave 1 is
// created; the ConfigMap of wave -1 comes before both.
func TestApplySyncWaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: after, namespace: %[1]s, annotations: {argocd.argoproj.io/sync-wave: "1"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: nginx:1.27}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: before, namespace: %[1]s, annotations: {argocd.argoproj.io/sync-wave: "-1"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s, annotations: {argocd.argoproj.io/sync-wave: "-2"}}
`, e.ns)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "waves.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("apply", "--yes", "-f", dir)
	d, err := e.kube.AppsV1().Deployments(e.ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var available time.Time
	for _, c := range d.Status.Conditions {
		if c.Type == "Available" && c.Status == "True" {
			available = c.LastTransitionTime.Time
		}
	}
	if available.IsZero() {
		t.Fatalf("the Deployment is not available after the apply: %+v", d.Status)
	}
	before, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, "after", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Times are in whole seconds: objects may share one.
	if after.CreationTimestamp.Before(&d.CreationTimestamp) || after.CreationTimestamp.Time.Before(available) {
		t.Errorf("wave 1's ConfigMap created at %v, before wave 0's Deployment was available at %v", after.CreationTimestamp, available)
	}
	if d.CreationTimestamp.Before(&before.CreationTimestamp) {
		t.Errorf("wave 0's Deployment created at %v, before wave -1's ConfigMap at %v", d.CreationTimestamp, before.CreationTimestamp)
	}
	// A second apply changes nothing.
	for _, c := range parseChanges(t, e.ok("preview", "-f", dir, "-o", "json").stdout) {
		if c.Action != "UnChanged" {
			t.Errorf("re-preview: %s %s %+v", c.ID, c.Action, c.Fields)
		}
	}
	// A sync wave that is not an integer is refused, naming where.
	if err := os.WriteFile(filepath.Join(dir, "waves.yaml"), []byte(strings.Replace(manifest, `"-1"`, `"early"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	e.fails([]string{"preview", "-f", dir}, "waves.yaml", `argocd.argoproj.io/sync-wave`, "early")
}
