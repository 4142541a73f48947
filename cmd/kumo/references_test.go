package main

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReferencesFollowTheirTargets: a resource whose $kumo_path target changes is
// re-applied with the new value, and a reference to a resource that does not
// exist yet previews as known after apply instead of failing the dry-run.
func TestReferencesFollowTheirTargets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ns := e.ns
	service := func(name, version string) string {
		return fmt.Sprintf(`- id: v1:Service:%[1]s:%[2]s
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: Service
    metadata: {name: %[2]s, namespace: %[1]s, labels: {v: "%[3]s"}}
    spec: {selector: {app: x}, ports: [{port: 80}]}
`, ns, name, version)
	}
	referrer := func(name, field string) string {
		return fmt.Sprintf(`- id: v1:ConfigMap:%[1]s:%[2]s
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: %[2]s, namespace: %[1]s, labels: {from: %[3]s}}
`, ns, name, field)
	}
	v1 := "resources:\n" + namespace(ns) + service("a", "1") + referrer("ref-a", "$kumo_path.v1:Service:"+ns+":a.metadata.labels.v")
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", v1))
	label := func(name string) string {
		cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm.Labels["from"]
	}
	if got := label("ref-a"); got != "1" {
		t.Fatalf("ref-a label = %q, want 1", got)
	}

	// The target changes: the referrer is updated with it.
	v2 := e.writeSpec("v2.yaml", "resources:\n"+namespace(ns)+service("a", "2")+referrer("ref-a", "$kumo_path.v1:Service:"+ns+":a.metadata.labels.v"))
	if c := e.preview(v2)["v1:ConfigMap:"+ns+":ref-a"]; c.Action != "Update" {
		t.Errorf("referrer of a changed Service previews as %+v, want Update", c)
	}
	e.ok("apply", "--yes", "-f", v2)
	if got := label("ref-a"); got != "2" {
		t.Errorf("ref-a label = %q after its Service changed, want 2", got)
	}

	// A new target in an existing namespace: no dry-run of the placeholder.
	v3 := e.writeSpec("v3.yaml", "resources:\n"+namespace(ns)+service("a", "2")+referrer("ref-a", "$kumo_path.v1:Service:"+ns+":a.metadata.labels.v")+
		service("b", "1")+referrer("ref-b", "$kumo_path.v1:Service:"+ns+":b.spec.clusterIP"))
	if c := e.preview(v3)["v1:ConfigMap:"+ns+":ref-b"]; c.Action != "Create" || len(c.Fields) != 1 || c.Fields[0].After != "(known after apply)" {
		t.Errorf("referrer of a new Service previews as %+v, want Create known after apply", c)
	}
	e.ok("apply", "--yes", "-f", v3)
	svc, err := e.kube.CoreV1().Services(ns).Get(ctx, "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := label("ref-b"); got == "" || got != svc.Spec.ClusterIP {
		t.Errorf("ref-b label = %q, want the clusterIP %q", got, svc.Spec.ClusterIP)
	}
}
