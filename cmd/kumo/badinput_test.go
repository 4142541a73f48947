package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func configMap(ns, name, extra string) string {
	return fmt.Sprintf(`- id: v1:ConfigMap:%[1]s:%[2]s
  type: Kubernetes
  %[3]s
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: %[2]s, namespace: %[1]s}
    data: {k: v}
`, ns, name, extra)
}

func namespace(ns string) string {
	return fmt.Sprintf(`- id: v1:Namespace:%[1]s
  type: Kubernetes
  attributes: {apiVersion: v1, kind: Namespace, metadata: {name: %[1]s}}
`, ns)
}

// TestInvalidSpecsAreRejectedBeforeAnythingRuns: each mistake is named, and no
// release is recorded.
func TestInvalidSpecsAreRejectedBeforeAnythingRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.ns
	cases := []struct {
		name, spec string
		want       []string
	}{
		{"cycle", "resources:\n" + configMap(ns, "a", "dependsOn: [v1:ConfigMap:"+ns+":b]") + configMap(ns, "b", "dependsOn: [v1:ConfigMap:"+ns+":a]"),
			[]string{"dependency cycle", "v1:ConfigMap:" + ns + ":a -> v1:ConfigMap:" + ns + ":b -> v1:ConfigMap:" + ns + ":a"}},
		{"unknown dependsOn", "resources:\n" + configMap(ns, "a", "dependsOn: [v1:ConfigMap:"+ns+":ghost]"),
			[]string{"v1:ConfigMap:" + ns + ":a", "v1:ConfigMap:" + ns + ":ghost"}},
		{"duplicate id", "resources:\n" + configMap(ns, "a", "") + configMap(ns, "a", ""),
			[]string{"duplicate", "v1:ConfigMap:" + ns + ":a"}},
		{"id does not match object", strings.Replace("resources:\n"+configMap(ns, "a", ""), "id: v1:ConfigMap:"+ns+":a", "id: v1:ConfigMap:"+ns+":other", 1),
			[]string{"v1:ConfigMap:" + ns + ":other", "v1:ConfigMap:" + ns + ":a"}},
		{"unknown type", strings.Replace("resources:\n"+configMap(ns, "a", ""), "type: Kubernetes", "type: Kubernets", 1),
			[]string{"v1:ConfigMap:" + ns + ":a", "Kubernets"}},
		{"malformed yaml", "resources:\n- id: [unclosed\n", []string{"bad.yaml", "line"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := e.writeSpec("bad.yaml", c.spec)
			e.fails([]string{"apply", "--yes", "-f", path}, c.want...)
			e.fails([]string{"preview", "-f", path}, c.want...)
		})
	}
	if r := e.run("release", "list", "-o", "json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("invalid specs recorded releases: %s", r)
	}
}

// TestRejectedByTheAPIServer: an object the apiserver refuses at dry-run stops the
// run before anything is applied; one it refuses only at apply time fails the
// release, which still records what was applied before it.
func TestRejectedByTheAPIServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ns := e.ns

	t.Run("at preview", func(t *testing.T) {
		spec := e.writeSpec("invalid.yaml", "resources:\n"+namespace(ns)+fmt.Sprintf(`- id: apps/v1:Deployment:%[1]s:bad
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: bad, namespace: %[1]s}
    spec:
      replicas: -1
      selector: {matchLabels: {app: bad}}
      template:
        metadata: {labels: {app: bad}}
        spec: {containers: [{name: c, image: nginx}]}
`, ns))
		// The namespace does not exist yet, so the Deployment is checked against the
		// apiserver only when applied; create it first so the dry-run sees it.
		e.ok("apply", "--yes", "-f", e.writeSpec("ns.yaml", "resources:\n"+namespace(ns)))
		e.fails([]string{"apply", "--yes", "-f", spec}, "apps/v1:Deployment:"+ns+":bad", "spec.replicas")
		if _, err := e.kube.AppsV1().Deployments(ns).Get(ctx, "bad", metav1.GetOptions{}); err == nil {
			t.Error("the invalid Deployment was created")
		}
		rows := e.releases()
		if last := rows[len(rows)-1]; last.Phase != "failed" || !strings.Contains(last.Error, "spec.replicas") {
			t.Errorf("release after a rejected preview = %+v", last)
		}
	})

	t.Run("at apply", func(t *testing.T) {
		// Two NodePort Services asking for the same port: each passes the dry-run on
		// its own, the second is refused once the first holds the port.
		svc := func(name, extra string) string {
			return fmt.Sprintf(`- id: v1:Service:%[1]s:%[2]s
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s%[3]s]
  attributes:
    apiVersion: v1
    kind: Service
    metadata: {name: %[2]s, namespace: %[1]s}
    spec:
      type: NodePort
      selector: {app: x}
      ports: [{port: 80, nodePort: 31080}]
`, ns, name, extra)
		}
		spec := e.writeSpec("clash.yaml", "resources:\n"+namespace(ns)+svc("first", "")+svc("second", ", v1:Service:"+ns+":first"))
		r := e.fails([]string{"apply", "--yes", "-f", spec}, "v1:Service:"+ns+":second", "31080")
		if !strings.Contains(r.stdout, "FAILED") {
			t.Errorf("progress does not show the failed node:\n%s", r.stdout)
		}
		rel := e.release(0)
		if rel["phase"] != "failed" {
			t.Fatalf("release phase %v, want failed", rel["phase"])
		}
		state := stateVersions(rel)
		if _, ok := state["v1:Service:"+ns+":first"]; !ok {
			t.Errorf("failed release state lacks the Service applied before the failure: %v", state)
		}
		if _, ok := state["v1:Service:"+ns+":second"]; ok {
			t.Errorf("failed release state records the rejected Service: %v", state)
		}
	})

	t.Run("reference to a missing field", func(t *testing.T) {
		spec := e.writeSpec("ref.yaml", "resources:\n"+namespace(ns)+configMap(ns, "src", "dependsOn: [v1:Namespace:"+ns+"]")+
			fmt.Sprintf(`- id: v1:ConfigMap:%[1]s:dst
  type: Kubernetes
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: dst, namespace: %[1]s}
    data: {k: $kumo_path.v1:ConfigMap:%[1]s:src.data.nope}
`, ns))
		e.fails([]string{"apply", "--yes", "-f", spec}, "$kumo_path.v1:ConfigMap:"+ns+":src.data.nope")
		if rel := e.release(0); rel["phase"] != "failed" {
			t.Errorf("release phase %v, want failed", rel["phase"])
		}
	})
}
