package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// webSpec: a Namespace, a Deployment, a Service and (optionally) a ConfigMap that
// holds the Service's cluster IP through a $kumo_path reference.
func webSpec(ns string, replicas int, withConfigMap bool) string {
	s := fmt.Sprintf(`resources:
- id: v1:Namespace:%[1]s
  type: Kubernetes
  attributes:
    apiVersion: v1
    kind: Namespace
    metadata: {name: %[1]s}
- id: apps/v1:Deployment:%[1]s:web
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: %[1]s}
    spec:
      replicas: %[2]d
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers:
          - name: web
            image: nginx:1.27
- id: v1:Service:%[1]s:web
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: Service
    metadata: {name: web, namespace: %[1]s}
    spec:
      selector: {app: web}
      ports: [{port: 80, targetPort: 80}]
`, ns, replicas)
	if withConfigMap {
		s += fmt.Sprintf(`- id: v1:ConfigMap:%[1]s:endpoint
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: endpoint, namespace: %[1]s}
    data:
      host: $kumo_path.v1:Service:%[1]s:web.spec.clusterIP
`, ns)
	}
	return s
}

// TestApplyReapplyChangeDestroy walks one project through its life: first apply,
// a no-op re-apply, a change with a removal, and destroy.
func TestApplyReapplyChangeDestroy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ns := e.ns
	v1 := e.writeSpec("v1.yaml", webSpec(ns, 2, true))

	// 1. First apply: everything created, the reference resolved to the live IP.
	out := e.ok("apply", "--yes", "-f", v1)
	if !strings.Contains(out.stdout, "Release 1 succeeded") {
		t.Errorf("apply output lacks the summary:\n%s", out.stdout)
	}
	svc, err := e.kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "endpoint", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP == "" || cm.Data["host"] != svc.Spec.ClusterIP {
		t.Errorf("ConfigMap host = %q, want the Service's clusterIP %q", cm.Data["host"], svc.Spec.ClusterIP)
	}
	dep, err := e.kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []metav1.Object{svc, cm, dep} {
		if m := obj.GetManagedFields(); len(m) == 0 || m[0].Manager != "kumo" {
			t.Errorf("%s: managed fields %v, want manager kumo", obj.GetName(), m)
		}
	}
	rows := e.releases()
	if len(rows) != 1 || rows[0].Phase != "succeeded" || rows[0].Resources != 4 || rows[0].Operation != "apply" {
		t.Fatalf("releases after first apply = %+v", rows)
	}

	// 2. Re-apply the same spec: all unchanged, nothing written to the cluster.
	for id, c := range e.preview(v1) {
		if c.Action != "UnChanged" {
			t.Errorf("re-preview: %s is %s %+v, want UnChanged", id, c.Action, c.Fields)
		}
	}
	before := e.resourceVersions(ns)
	e.ok("apply", "--yes", "-f", v1)
	if after := e.resourceVersions(ns); !mapsEqual(before, after) {
		t.Errorf("re-apply changed resourceVersions: before %v after %v", before, after)
	}
	if rows := e.releases(); len(rows) != 2 || rows[1].Phase != "succeeded" || rows[1].Resources != 4 {
		t.Fatalf("releases after re-apply = %+v", rows)
	}

	// 3. Scale the Deployment and drop the ConfigMap.
	v2 := e.writeSpec("v2.yaml", webSpec(ns, 3, false))
	changes := e.preview(v2)
	depChange := changes["apps/v1:Deployment:"+ns+":web"]
	if depChange.Action != "Update" || len(depChange.Fields) != 1 || depChange.Fields[0].Path != "spec.replicas" {
		t.Errorf("Deployment change = %+v, want Update of spec.replicas only", depChange)
	}
	if c := changes["v1:ConfigMap:"+ns+":endpoint"]; c.Action != "Delete" {
		t.Errorf("ConfigMap change = %+v, want Delete", c)
	}
	if c := changes["v1:Service:"+ns+":web"]; c.Action != "UnChanged" {
		t.Errorf("Service change = %+v, want UnChanged", c)
	}
	e.ok("apply", "--yes", "-f", v2)
	if dep, err = e.kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || *dep.Spec.Replicas != 3 {
		t.Errorf("Deployment after change: %v, err %v; want 3 replicas", dep.Spec.Replicas, err)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "endpoint", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap still there after removal from the spec (err %v)", err)
	}
	if got := stateVersions(e.release(3)); len(got) != 3 {
		t.Errorf("revision 3 state = %v, want 3 resources", got)
	}

	// 4. Destroy: everything gone, including the Namespace.
	e.ok("destroy", "--yes")
	if _, err := e.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s still there after destroy (err %v)", ns, err)
	}
	rows = e.releases()
	var revs []int
	for _, r := range rows {
		revs = append(revs, r.Revision)
		if r.Phase != "succeeded" {
			t.Errorf("revision %d is %s (%s)", r.Revision, r.Phase, r.Error)
		}
	}
	if !slices.Equal(revs, []int{1, 2, 3, 4}) || rows[3].Operation != "destroy" || rows[3].Resources != 0 {
		t.Errorf("releases after destroy = %+v", rows)
	}
	e.fails([]string{"destroy", "--yes"}, "nothing to destroy")
}

// resourceVersions of the objects the web spec manages in ns.
func (e *env) resourceVersions(ns string) map[string]string {
	e.t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	if n, err := e.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
		out["ns"] = n.ResourceVersion
	}
	if d, err := e.kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err == nil {
		out["deployment"] = d.ResourceVersion
	}
	if s, err := e.kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{}); err == nil {
		out["service"] = s.ResourceVersion
	}
	if c, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "endpoint", metav1.GetOptions{}); err == nil {
		out["configmap"] = c.ResourceVersion
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
