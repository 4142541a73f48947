package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A resource's kubeConfig extension naming a kubeconfig file the workspace does
// not list is refused at preview, naming the resource, the value and the
// setting, and nothing is applied; listed in the workspace's
// runtimes.kubernetes.kubeconfigs, the same cluster is reached by its name.
func TestKubeConfigExtensionFromWorkspace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	data, err := os.ReadFile(e.cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// Another file on the worker that happens to reach a cluster.
	other := filepath.Join(t.TempDir(), "other.kubeconfig")
	if err := os.WriteFile(other, data, 0o600); err != nil {
		t.Fatal(err)
	}
	spec := func(kubeconfig string) string {
		return e.writeSpec("spec.yaml", fmt.Sprintf(`resources:
- id: v1:Namespace:%[1]s
  type: Kubernetes
  attributes: {apiVersion: v1, kind: Namespace, metadata: {name: %[1]s}}
- id: v1:ConfigMap:%[1]s:elsewhere
  type: Kubernetes
  attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: elsewhere, namespace: %[1]s}, data: {k: v}}
  dependsOn: [v1:Namespace:%[1]s]
  extensions: {kubeConfig: %[2]q}
`, e.ns, kubeconfig))
	}
	e.fails([]string{"preview", "-f", spec(other)},
		"v1:ConfigMap:"+e.ns+":elsewhere", fmt.Sprintf("%q", other), "runtimes.kubernetes.kubeconfigs")
	e.fails([]string{"apply", "-f", spec(other), "--yes"}, "runtimes.kubernetes.kubeconfigs")
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "elsewhere", metav1.GetOptions{}); err == nil {
		t.Fatal("the ConfigMap was applied through a kubeconfig the workspace does not list")
	}

	ws := e.writeSpec("edge.yaml", fmt.Sprintf("runtimes:\n  kubernetes:\n    kubeconfigs: {edge: %q}\n", other))
	e.ok("workspace", "create", "edge", "--file", ws)
	e.ok("apply", "-f", spec("edge"), "--workspace", "edge", "--yes")
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(context.Background(), "elsewhere", metav1.GetOptions{}); err != nil {
		t.Fatalf("the ConfigMap of the listed cluster: %v", err)
	}
}
