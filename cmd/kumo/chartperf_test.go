package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// perfChart writes a chart of 5 × count objects (ServiceAccounts,
// ConfigMaps, Secrets, Services and one-replica Deployments) to dir; its
// value "version" goes into every ConfigMap and every Pod template, so a new
// version updates them all and rolls every Deployment.
func perfChart(t *testing.T, dir string, count int) {
	t.Helper()
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: perf\nversion: 0.1.0\n",
		"values.yaml": fmt.Sprintf("count: %d\nversion: \"1\"\n", count),
		"templates/objects.yaml": `{{- range $i, $_ := until (int .Values.count) }}
apiVersion: v1
kind: ServiceAccount
metadata: {name: app-{{ $i }}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-{{ $i }}}
data: {version: "{{ $.Values.version }}"}
---
apiVersion: v1
kind: Secret
metadata: {name: app-{{ $i }}}
stringData: {token: "t-{{ $i }}"}
---
apiVersion: v1
kind: Service
metadata: {name: app-{{ $i }}}
spec:
  selector: {app: app-{{ $i }}}
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app-{{ $i }}}
spec:
  replicas: 1
  selector: {matchLabels: {app: app-{{ $i }}}}
  template:
    metadata:
      labels: {app: app-{{ $i }}}
      annotations: {version: "{{ $.Values.version }}"}
    spec:
      serviceAccountName: app-{{ $i }}
      containers: [{name: app, image: nginx:1.27}]
---
{{- end }}
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChartApplyVersusHelm times, on the same cluster, kumo rendering and
// applying a chart of 50 objects (install, then an upgrade that rolls every
// Deployment) against `helm upgrade --install --wait` of the same chart into
// another namespace. It reports; it asserts no time. It runs only with
// KUMO_BENCH_HELM naming a helm binary (built from helm.sh/helm/v3/cmd/helm):
//
//	KUMO_BENCH_HELM=/path/to/helm go test -run TestChartApplyVersusHelm -v ./cmd/kumo
func TestChartApplyVersusHelm(t *testing.T) {
	helm := os.Getenv("KUMO_BENCH_HELM")
	if testing.Short() || helm == "" {
		t.Skip("set KUMO_BENCH_HELM to a helm binary (and drop -short) to compare with helm")
	}
	e := newEnv(t)
	ctx := context.Background()
	chart := t.TempDir()
	perfChart(t, chart, 10)
	kumoNS, helmNS := e.ns, e.ns+"-helm"
	for _, ns := range []string{kumoNS, helmNS} {
		if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	timed := func(what string, f func()) time.Duration {
		began := time.Now()
		f()
		d := time.Since(began)
		t.Logf("%-50s %6.2f s", what, d.Seconds())
		return d
	}
	helmCmd := func(args ...string) {
		cmd := exec.CommandContext(ctx, helm, append([]string{"--kubeconfig", e.cluster.Kubeconfig}, args...)...)
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm %v: %v\n%s", args, err, out)
		}
	}
	kumoPath(t) // built before the clock starts
	timed("kumo spec convert --chart (render only)", func() { e.ok("spec", "convert", "--chart", chart, "-n", kumoNS) })
	timed("kumo apply --chart (install, waits for health)", func() { e.ok("apply", "--yes", "--chart", chart, "-n", kumoNS) })
	timed("helm upgrade --install --wait (install)", func() {
		helmCmd("upgrade", "--install", "--wait", "--timeout", "5m", "-n", helmNS, "perf", chart)
	})
	timed("kumo apply --chart --set version=2 (upgrade)", func() {
		e.ok("apply", "--yes", "--chart", chart, "-n", kumoNS, "--set", "version=2")
	})
	timed("helm upgrade --install --wait --set version=2", func() {
		helmCmd("upgrade", "--install", "--wait", "--timeout", "5m", "-n", helmNS, "--set", "version=2", "perf", chart)
	})
	timed("kumo apply --chart --set version=2 (no change)", func() {
		e.ok("apply", "--yes", "--chart", chart, "-n", kumoNS, "--set", "version=2")
	})
	timed("helm upgrade --install --wait (no change)", func() {
		helmCmd("upgrade", "--install", "--wait", "--timeout", "5m", "-n", helmNS, "--set", "version=2", "perf", chart)
	})
	deps, err := e.kube.AppsV1().Deployments(kumoNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps.Items {
		if d.Status.AvailableReplicas != 1 || d.Spec.Template.Annotations["version"] != "2" {
			t.Errorf("kumo's %s after the upgrade: version %q, %d available", d.Name, d.Spec.Template.Annotations["version"], d.Status.AvailableReplicas)
		}
	}
	t.Cleanup(func() {
		_ = e.kube.CoreV1().Namespaces().Delete(context.Background(), helmNS, metav1.DeleteOptions{})
	})
}
