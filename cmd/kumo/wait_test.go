package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/runspec"
)

// deployment is a Deployment of replicas Pods in ns; podSpec and spec add
// lines to its Pod template's spec and to its own spec (indented YAML).
func deployment(ns, name string, replicas int, spec, podSpec string) string {
	return fmt.Sprintf(`- id: apps/v1:Deployment:%[1]s:%[2]s
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: %[2]s, namespace: %[1]s}
    spec:
      replicas: %[3]d
      selector: {matchLabels: {app: %[2]s}}
%[4]s      template:
        metadata: {labels: {app: %[2]s}}
        spec:
%[5]s          containers:
          - {name: app, image: nginx:1.27}
`, ns, name, replicas, spec, podSpec)
}

// Test 1: a Deployment that becomes available is waited for: the ConfigMap
// that depends on it is created only once it is available.
func TestApplyWaitsForDeploymentBeforeDependents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dep := "apps/v1:Deployment:" + e.ns + ":web"
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+deployment(e.ns, "web", 2, "", "")+
		configMap(e.ns, "after-web", "dependsOn: ["+dep+"]"))
	out := e.ok("apply", "--yes", "-f", spec).stdout
	if !regexp.MustCompile(`done +create ` + regexp.QuoteMeta(dep) + `: Progressing.* → Healthy: 2/2 replicas available\n`).MatchString(out) {
		t.Errorf("the apply did not show the Deployment's health transitions:\n%s", out)
	}

	ctx := context.Background()
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
	if available.IsZero() || d.Status.AvailableReplicas != 2 {
		t.Fatalf("deployment not available after the apply: %+v", d.Status)
	}
	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, "after-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Both times are in whole seconds: the ConfigMap may share the second.
	if cm.CreationTimestamp.Time.Before(available) {
		t.Errorf("ConfigMap created at %v, before the Deployment was available at %v", cm.CreationTimestamp, available)
	}
	if rows := e.releases(); len(rows) != 1 || rows[0].Phase != "succeeded" {
		t.Errorf("releases = %+v", rows)
	}
	// The release records the Deployment as its wait saw it available, not
	// as applied: the next run finds its record current (nothing to refresh).
	res := stateResource(e.release(1), dep)
	if res == nil {
		t.Fatalf("release 1 records no %s", dep)
	}
	recorded, _ := res["attributes"].(map[string]any)
	status, _ := recorded["status"].(map[string]any)
	meta, _ := recorded["metadata"].(map[string]any)
	if meta["resourceVersion"] != d.ResourceVersion || status["availableReplicas"] != float64(2) {
		t.Errorf("release 1 records the Deployment at resourceVersion %v with status %v, want %s, available as it is live: %+v",
			meta["resourceVersion"], status, d.ResourceVersion, d.Status)
	}
}

// unschedulable is a Pod spec no node matches: its Pods stay Pending, so the
// Deployment never becomes available.
func unschedulable(label string) string {
	return "          nodeSelector: {" + label + ": \"yes\"}\n"
}

// Test 2: a Deployment that never becomes available fails the apply once the
// --timeout passes, naming it, its health and why; its dependent is never
// applied. With a progress deadline it fails as soon as the deadline is
// exceeded (Degraded), not at the timeout.
func TestApplyFailsWhenDeploymentNeverAvailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dep := "apps/v1:Deployment:" + e.ns + ":stuck"
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+deployment(e.ns, "stuck", 1, "", unschedulable("kumo-test/"+e.ns))+
		configMap(e.ns, "after", "dependsOn: ["+dep+"]"))
	r := e.fails([]string{"apply", "--yes", "--timeout", "4s", "-f", spec}, dep+": Progressing for 4s: 0/1 replicas available")
	if strings.Contains(r.stdout, "done     create v1:ConfigMap:"+e.ns+":after") {
		t.Errorf("the dependent was applied although the Deployment never became available:\n%s", r.stdout)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "after", metav1.GetOptions{}); err == nil {
		t.Errorf("ConfigMap after exists")
	}
	// The same apply again changes nothing, but the Deployment is still not
	// available: it is waited for again, and the release fails again instead
	// of recording a success over an unhealthy resource.
	r = e.fails([]string{"apply", "--yes", "--timeout", "3s", "-f", spec}, dep+": Progressing for 3s: 0/1 replicas available")
	for _, want := range []string{dep + "  (not healthy, an apply waits for it: Progressing", "FAILED   wait for " + dep + ": "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the second apply does not say %q:\n%s", want, r.stdout)
		}
	}
	if rows := e.releases(); len(rows) != 2 || rows[0].Phase != "failed" || rows[1].Phase != "failed" {
		t.Errorf("releases after two applies of a never-available Deployment = %+v, want two failed", rows)
	}

	// The same with a progress deadline of 1 s and a timeout far away.
	other := *e
	other.project, other.ns = e.project+"-pd", e.ns+"-pd"
	dep = "apps/v1:Deployment:" + other.ns + ":stuck"
	spec = e.writeSpec("deadline.yaml", "resources:\n"+namespace(other.ns)+
		deployment(other.ns, "stuck", 1, "      progressDeadlineSeconds: 1\n", unschedulable("kumo-test/"+other.ns)))
	r = other.fails([]string{"apply", "--yes", "--timeout", "10m", "-f", spec}, dep+": Degraded: ")
	if strings.Contains(r.stderr, "for 10m0s") {
		t.Errorf("the apply waited out the timeout: %s", r.stderr)
	}
	if !strings.Contains(r.stderr, "progress deadline") {
		t.Errorf("the failure does not say the progress deadline was exceeded: %s", r.stderr)
	}

	// A workspace that counts Deployments as done once applied waits for
	// none: the first stack's apply succeeds, its dependent created.
	e.ok("workspace", "update", "default", "--file", e.writeSpec("lenient.yaml", "health:\n  doneWhenApplied: [apps/Deployment]\n"))
	e.ok("apply", "--yes", "--timeout", "3s", "-f", e.writeSpec("again.yaml", "resources:\n"+namespace(e.ns)+
		deployment(e.ns, "stuck", 1, "", unschedulable("kumo-test/"+e.ns))+configMap(e.ns, "after", "dependsOn: [apps/v1:Deployment:"+e.ns+":stuck]")))
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "after", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap after, in a workspace that does not wait for Deployments: %v", err)
	}
	e.fails([]string{"workspace", "update", "default", "--file", e.writeSpec("bad.yaml", "health:\n  doneWhenApplied: [apps/v1/Deployment]\n")},
		"bad.yaml: health.doneWhenApplied[0]")
}

// Test 4: the worker is killed while it waits for a Deployment; the run
// resumes on a new worker, keeps waiting, and succeeds once the Deployment
// becomes available (its Pods get a node to run on).
func TestKilledWorkerWaitResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	address := temporalServer(t)
	e.flags = address.flags()
	w := e.worker()
	label := "kumo-test/" + e.ns
	dep := "apps/v1:Deployment:" + e.ns + ":later"
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+deployment(e.ns, "later", 1, "", unschedulable(label))+
		configMap(e.ns, "after", "dependsOn: ["+dep+"]"))
	_, wait := e.background(nil, "apply", "--yes", "--timeout", "2m", "-f", spec)

	ctx := context.Background()
	tc := address.dial(t)
	defer tc.Close()
	waiting := func(attempt int32) func() bool {
		return func() bool {
			desc, err := tc.DescribeWorkflowExecution(ctx, "kumo/"+e.project+"/default", "")
			if err != nil {
				return false
			}
			for _, a := range desc.GetPendingActivities() {
				if a.GetActivityType().GetName() == runspec.WaitResourceActivity && a.GetAttempt() >= attempt && a.GetHeartbeatDetails() != nil {
					return true
				}
			}
			return false
		}
	}
	waitFor(t, "the wait for the Deployment to begin", time.Minute, waiting(1))
	if err := w.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.worker()
	waitFor(t, "the wait to be retried on the new worker", time.Minute, waiting(2))
	// Let the Pods run: label the node they select.
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"yes"}}}`, label)
	if _, err := e.kube.CoreV1().Nodes().Patch(ctx, localcluster.NodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, label)
		_, _ = e.kube.CoreV1().Nodes().Patch(context.Background(), localcluster.NodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	})
	r := wait()
	if r.code != 0 {
		t.Fatalf("apply after the worker was replaced: %s", r)
	}
	if !strings.Contains(r.stdout, "Healthy: 1/1 replicas available") {
		t.Errorf("the resumed run did not wait until the Deployment was available:\n%s", r.stdout)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, "after", metav1.GetOptions{}); err != nil {
		t.Errorf("the dependent ConfigMap: %v", err)
	}
}

// crdAndWidget: a CRD of kind Widget in group <ns>.example.com and one Widget of
// it in ns, with no explicit dependency between the two.
func crdAndWidget(ns string) string {
	group := ns + ".example.com"
	return fmt.Sprintf(`- id: apiextensions.k8s.io/v1:CustomResourceDefinition:widgets.%[2]s
  type: Kubernetes
  attributes:
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: widgets.%[2]s}
    spec:
      group: %[2]s
      scope: Namespaced
      names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
      versions:
      - name: v1
        served: true
        storage: true
        schema:
          openAPIV3Schema:
            type: object
            properties:
              spec:
                type: object
                properties: {size: {type: integer}}
- id: %[2]s/v1:Widget:%[1]s:w
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: %[2]s/v1
    kind: Widget
    metadata: {name: w, namespace: %[1]s}
    spec: {size: 3}
`, ns, group)
}

// Test 3: a CRD and a custom resource of it in one spec: the preview plans the
// custom resource as a create it could not dry-run, and one apply creates
// both, the custom resource after the CRD is established.
func TestApplyCRDAndCustomResourceInOneRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+crdAndWidget(e.ns))
	cr := e.ns + ".example.com/v1:Widget:" + e.ns + ":w"
	crd := "apiextensions.k8s.io/v1:CustomResourceDefinition:widgets." + e.ns + ".example.com"
	p := e.ok("preview", "-f", spec, "-o", "json").stdout
	if !strings.Contains(p, "not dry-run: its kind is defined by "+crd) {
		t.Errorf("preview does not say the custom resource could not be dry-run:\n%s", p)
	}
	out := e.ok("apply", "--yes", "-f", spec).stdout
	crdDone := strings.Index(out, "done     create "+crd)
	crDone := strings.Index(out, "done     create "+cr)
	if crdDone < 0 || crDone < 0 || crDone < crdDone {
		t.Errorf("want the CRD done (established), then the custom resource:\n%s", out)
	}
	if rows := e.releases(); len(rows) != 1 || rows[0].Phase != "succeeded" || rows[0].Resources != 3 {
		t.Errorf("releases = %+v", rows)
	}
	e.ok("destroy", "--yes") // the CRD is cluster-scoped: remove it
}
