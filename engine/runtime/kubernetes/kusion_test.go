package kubernetes

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/internal/localcluster"
)

// A cluster-scoped object written with a namespace (a 4-part ID, as some
// generators write a ClusterRole) is applied, read and deleted cluster-scoped:
// the scope comes from discovery, not from the ID.
func TestClusterScopedWithNamespace(t *testing.T) {
	_, rt, ns := setup(t)
	name := ns + "-reader"
	role := &engine.Resource{
		ID: "rbac.authorization.k8s.io/v1:ClusterRole:default:" + name, Type: engine.Kubernetes,
		Attributes: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
			"metadata": map[string]any{"name": name, "namespace": "default", "creationTimestamp": nil},
			"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get"}}},
		},
	}
	ctx := context.Background()
	planned, err := rt.Apply(ctx, role, runtime.ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	out := mustApply(t, rt, role)
	if got := out.Attributes["metadata"].(map[string]any)["namespace"]; got != nil {
		t.Fatalf("applied with namespace %v", got)
	}
	live, err := rt.Read(ctx, role)
	if err != nil || live == nil {
		t.Fatalf("Read = %v, %v", live, err)
	}
	if c := engine.Diff(role.ID, role.Type, planned, nil, nil); c.Action != engine.Create {
		t.Fatalf("preview before apply: %s", c.Action)
	}
	again, err := rt.Apply(ctx, role, runtime.ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := engine.Diff(role.ID, role.Type, again, live, out); c.Action != engine.UnChanged {
		t.Fatalf("re-preview: %s %+v", c.Action, c.Fields)
	}
	if err := rt.Delete(ctx, role); err != nil {
		t.Fatal(err)
	}
	if live, err := rt.Read(ctx, role); !errors.Is(err, runtime.ErrNotFound) || live != nil {
		t.Fatalf("after delete: %v, %v; want not found", live, err)
	}
}

// Attributes as generators serialise Go types (nulls, empty structs) apply,
// and a re-preview right after shows no change.
func TestGeneratorNullsReapplyUnchanged(t *testing.T) {
	_, rt, ns := setup(t)
	labels := map[string]any{"app": "web"}
	dep := &engine.Resource{
		ID: "apps/v1:Deployment:" + ns + ":web", Type: engine.Kubernetes,
		Attributes: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": ns, "creationTimestamp": nil, "labels": labels},
			"spec": map[string]any{
				"replicas": int64(1),
				"selector": map[string]any{"matchLabels": labels},
				"strategy": map[string]any{},
				"template": map[string]any{
					"metadata": map[string]any{"labels": labels, "creationTimestamp": nil},
					"spec": map[string]any{"containers": []any{map[string]any{
						"name": "web", "image": "nginx:1.27", "resources": map[string]any{}, "env": nil,
					}}},
				},
			},
			"status": map[string]any{},
		},
	}
	ctx := context.Background()
	applied := mustApply(t, rt, dep)
	planned, err := rt.Apply(ctx, dep, runtime.ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	live, err := rt.Read(ctx, dep)
	if err != nil {
		t.Fatal(err)
	}
	if c := engine.Diff(dep.ID, dep.Type, planned, live, applied); c.Action != engine.UnChanged || c.Drifted {
		t.Fatalf("re-preview: %s drifted=%v %+v", c.Action, c.Drifted, c.Fields)
	}
}

// The kubeConfig extension sends a resource to another cluster than the
// runtime's own, one the workspace lists (runtimes.kubernetes.kubeconfigs), by
// its name or its path: here the runtime's kubeconfig points at nothing, the
// listed cluster's at the test cluster.
func TestKubeConfigExtension(t *testing.T) {
	c, _, ns := setup(t)
	missing := filepath.Join(t.TempDir(), "missing")
	rt, err := New(Config{Kubeconfig: brokenKubeconfig(t, c), Kubeconfigs: map[string]string{"test": c.Kubeconfig, "gone": missing}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, v := range []string{"test", c.Kubeconfig} {
		cm := configMap(ns, "elsewhere", map[string]any{"k": "v"})
		cm.Extensions = map[string]any{engine.ExtKubeConfig: v}
		if _, err := rt.Apply(ctx, cm, runtime.ApplyOptions{}); err != nil {
			t.Fatalf("apply through the kubeConfig extension %q: %v", v, err)
		}
		if live, err := rt.Read(ctx, cm); err != nil || live == nil {
			t.Fatalf("Read = %v, %v", live, err)
		}
		if err := rt.Delete(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	cm := configMap(ns, "elsewhere", map[string]any{"k": "v"})
	cm.Extensions = map[string]any{engine.ExtKubeConfig: "gone"}
	if _, err := rt.Apply(ctx, cm, runtime.ApplyOptions{}); err == nil || !runtime.IsPermanent(err) {
		t.Fatalf("missing kubeconfig file: err = %v, want a permanent error", err)
	}
}

// brokenKubeconfig writes a copy of c's kubeconfig whose current context,
// "broken", points at a port nothing listens on; context localcluster.Name
// still reaches c.
func brokenKubeconfig(t *testing.T, c *localcluster.Cluster) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters["broken"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", InsecureSkipTLSVerify: true}
	cfg.Contexts["broken"] = &clientcmdapi.Context{Cluster: "broken", AuthInfo: localcluster.Name}
	cfg.CurrentContext = "broken"
	path := filepath.Join(t.TempDir(), "config")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
