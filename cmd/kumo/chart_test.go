package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kumoproj/kumo/internal/ocitest"
)

// testChart is engine/chart's test chart: values, .Capabilities, a CRD in
// crds/ with a custom resource in templates/, and a vendored subchart.
var testChart = filepath.Join("..", "..", "engine", "chart", "testdata", "web")

// releaseChart is the chart a release recorded (release show -o json).
func releaseChart(t *testing.T, rel map[string]any) map[string]any {
	t.Helper()
	c, _ := rel["chart"].(map[string]any)
	if c == nil {
		t.Fatalf("release %v records no chart", rel["revision"])
	}
	return c
}

// TestApplyChart: kumo apply --chart renders a chart for the cluster (its
// version and API versions), applies it with its CRD, subchart and
// pre-install hook, records the chart and the hook on the release; an upgrade
// with new values runs the pre-upgrade hook and updates the objects in place
// (same UIDs); rollback restores the first values and records the first
// release's chart; destroy removes everything; the same chart from an OCI
// registry installs again.
func TestApplyChart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.ns
	ctx := context.Background()
	if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	version, err := e.kube.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}

	conv := e.ok("spec", "convert", "--chart", testChart, "-n", ns, "--no-hooks").stdout
	for _, want := range []string{
		"- id: apiextensions.k8s.io/v1:CustomResourceDefinition:widgets.charts.kumo.test\n",
		"- id: v1:ConfigMap:" + ns + ":web-cache\n",
		"- id: policy/v1:PodDisruptionBudget:" + ns + ":web\n", // the cluster serves policy/v1
		"- id: charts.kumo.test/v1:Widget:" + ns + ":web\n",
		"kumo.test/kube-version: " + version.GitVersion + "\n",
	} {
		if !strings.Contains(conv, want) {
			t.Errorf("spec convert --chart lacks %q:\n%s", want, conv)
		}
	}

	// The chart has a pre-install hook: --no-hooks leaves it out (and says
	// so), as helm install --no-hooks does (hooks: TestChartHooks).
	r := e.ok("preview", "--chart", testChart, "-n", ns, "--no-hooks")
	for _, want := range []string{"Warning: --no-hooks: chart web's Helm hooks are left out: Job/web-migrate (pre-install, pre-upgrade)",
		"Note: chart web's test hooks are kept for kumo test, never applied: Pod/web-test-connection (test)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("preview --no-hooks: stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// Installed with its hook: the pre-install Job runs to completion before
	// the chart's objects and is deleted once it succeeded (hook-succeeded).
	migrate := "batch/v1:Job:" + ns + ":web-migrate"
	e.ok("apply", "--yes", "--chart", testChart, "-n", ns)
	if got := releaseHooks(t, e.release(1)); !slices.Equal(got, []string{"pre pre-install " + migrate + " succeeded deleted"}) {
		t.Errorf("release 1 hooks: %q, want the pre-install Job, succeeded and deleted", got)
	}
	if _, err := e.kube.BatchV1().Jobs(ns).Get(ctx, "web-migrate", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the hook Job is still there after it succeeded: %v", err)
	}
	cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep, err := e.kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != "hello" || *dep.Spec.Replicas != 1 {
		t.Errorf("first apply: message %q, replicas %d", cm.Data["message"], *dep.Spec.Replicas)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-cache", metav1.GetOptions{}); err != nil {
		t.Errorf("the subchart's ConfigMap: %v", err)
	}
	dyn, err := dynamic.NewForConfig(e.cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	widgets := dyn.Resource(schema.GroupVersionResource{Group: "charts.kumo.test", Version: "v1", Resource: "widgets"})
	if _, err := widgets.Namespace(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Errorf("the custom resource of the chart's CRD: %v", err)
	}
	first := releaseChart(t, e.release(1))
	if first["chart"] != "web" || first["version"] != "0.1.0" || first["release"] != "web" || first["ref"] != testChart || !strings.HasPrefix(first["valuesDigest"].(string), "sha256:") {
		t.Errorf("release 1 chart = %v", first)
	}

	// An upgrade with new values: updates, not re-creates; the pre-upgrade
	// hook runs again.
	prod := filepath.Join("..", "..", "engine", "chart", "testdata", "web-prod-values.yaml")
	e.ok("apply", "--yes", "--chart", testChart, "-n", ns, "--values", prod, "--set", "image=example.com/web:v2")
	if got := releaseHooks(t, e.release(2)); !slices.Equal(got, []string{"pre pre-upgrade " + migrate + " succeeded deleted"}) {
		t.Errorf("release 2 hooks: %q, want the pre-upgrade Job, succeeded and deleted", got)
	}
	cm2, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep2, err := e.kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm2.Data["message"] != "from-prod-values" || *dep2.Spec.Replicas != 2 || dep2.Spec.Template.Spec.Containers[0].Image != "example.com/web:v2" {
		t.Errorf("upgrade: message %q, replicas %d, image %s", cm2.Data["message"], *dep2.Spec.Replicas, dep2.Spec.Template.Spec.Containers[0].Image)
	}
	if cm2.UID != cm.UID || dep2.UID != dep.UID {
		t.Errorf("upgrade re-created objects: ConfigMap %s -> %s, Deployment %s -> %s", cm.UID, cm2.UID, dep.UID, dep2.UID)
	}
	second := releaseChart(t, e.release(2))
	if second["valuesDigest"] == first["valuesDigest"] {
		t.Errorf("new values, same digest: %v", second)
	}

	// Rollback to revision 1: its values again, its chart recorded.
	e.ok("rollback", "--yes")
	cm3, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm3.Data["message"] != "hello" || cm3.UID != cm.UID {
		t.Errorf("rollback: message %q, UID %s (was %s)", cm3.Data["message"], cm3.UID, cm.UID)
	}
	if third := releaseChart(t, e.release(3)); third["valuesDigest"] != first["valuesDigest"] {
		t.Errorf("rollback recorded chart %v, want revision 1's %v", third, first)
	}
	if table := e.ok("release", "list").stdout; !strings.Contains(table, "web@0.1.0") {
		t.Errorf("release list does not name the chart:\n%s", table)
	}

	e.ok("destroy", "--yes")
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-cache", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("subchart ConfigMap after destroy: %v", err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Get(ctx, "widgets.charts.kumo.test", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("CRD after destroy: %v", err)
	}

	// The same chart from an OCI registry (in-process, loopback, basic auth),
	// with the credentials of the Docker config.
	reg := ocitest.Start(t)
	ref := reg.PushChart(t, testChart, "charts")
	e.environ = append(e.environ, "HELM_REGISTRY_CONFIG="+filepath.Join(t.TempDir(), "none.json"), "DOCKER_CONFIG="+t.TempDir())
	e.fails([]string{"apply", "--yes", "--chart", ref, "-n", ns, "--no-hooks"}, "chart "+ref, "basic credential not found")
	e.environ = append(e.environ, "DOCKER_CONFIG="+reg.DockerConfig)
	e.ok("apply", "--yes", "--chart", ref, "-n", ns, "--set", "message=from-oci")
	cm5, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-settings", metav1.GetOptions{})
	if err != nil || cm5.Data["message"] != "from-oci" {
		t.Errorf("apply from OCI: %v %v", cm5.Data, err)
	}
	if oci := releaseChart(t, e.release(0)); oci["chart"] != "web" || !strings.HasPrefix(oci["ref"].(string), ref+"@sha256:") {
		t.Errorf("release from OCI records chart %v", oci)
	}
	e.ok("destroy", "--yes")

	e.fails([]string{"apply", "--yes", "--values", prod, "-f", prod}, "--values goes with --chart")
	e.fails([]string{"apply", "--yes", "--chart", testChart, "-k", testChart}, "give one of -f/--spec-file, -k/--kustomize or --chart")
}
