package localcluster_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kumoproj/kumo/internal/localcluster"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	pods        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// TestWorkloadsDeploymentBecomesAvailable: with Workloads, a Deployment gets a
// ReplicaSet and Pods that kwok runs on the simulated node, and becomes
// available, as on a real cluster.
func TestWorkloadsDeploymentBecomesAvailable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	begin := time.Now()
	c, err := localcluster.Start(context.Background(), localcluster.Options{Dir: t.TempDir(), UnsafeNoFsync: true, Workloads: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	t.Logf("cluster with workloads started in %v", time.Since(begin).Round(time.Millisecond))
	if len(c.Processes()) != 5 || !c.Running() {
		t.Fatalf("processes %+v", c.Processes())
	}

	client, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "web", "image": "nginx:1.27",
					"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/", "port": int64(80)}},
				}}},
			},
		},
	}}
	created := time.Now()
	if _, err := client.Resource(deployments).Namespace("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last string
	for {
		live, err := client.Resource(deployments).Namespace("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		available, _, _ := unstructured.NestedInt64(live.Object, "status", "availableReplicas")
		if available == 2 {
			break
		}
		last = fmt.Sprint(live.Object["status"])
		select {
		case <-ctx.Done():
			t.Fatalf("deployment not available: status %s\nscheduler log:\n%s", last, logOf(c, "kube-scheduler"))
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Logf("deployment available %v after create", time.Since(created).Round(time.Millisecond))

	list, err := client.Resource(pods).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("%d pods, want 2", len(list.Items))
	}
	for _, p := range list.Items {
		node, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName")
		phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
		conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
		ready := false
		for _, cond := range conds {
			m := cond.(map[string]any)
			ready = ready || m["type"] == "Ready" && m["status"] == "True"
		}
		if node != localcluster.NodeName || phase != "Running" || !ready {
			t.Errorf("pod %s: node %q, phase %q, ready %v", p.GetName(), node, phase, ready)
		}
	}
	for _, p := range c.Processes() {
		t.Logf("%-24s RSS %s", p.Name, rss(p.PID))
	}
}

func logOf(c *localcluster.Cluster, name string) string {
	for _, p := range c.Processes() {
		if p.Name == name {
			b, _ := os.ReadFile(p.Log)
			return string(b)
		}
	}
	return ""
}

// rss reads a process's resident set size from /proc (Linux), for the log.
func rss(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// BenchmarkStart measures what Workloads costs: start time (until the
// apiserver is ready, and with Workloads the simulated Node too) and the
// resident memory of all the cluster's processes right after.
func BenchmarkStart(b *testing.B) {
	for _, workloads := range []bool{false, true} {
		name := "control-plane"
		if workloads {
			name = "workloads"
		}
		b.Run(name, func(b *testing.B) {
			var rssKB int64
			for i := 0; i < b.N; i++ {
				c, err := localcluster.Start(context.Background(), localcluster.Options{Dir: b.TempDir(), UnsafeNoFsync: true, Workloads: workloads})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				time.Sleep(2 * time.Second) // let the controllers finish their first sync
				for _, p := range c.Processes() {
					var kb int64
					fmt.Sscanf(rss(p.PID), "%d kB", &kb)
					rssKB += kb
				}
				if err := c.Stop(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(rssKB)/1024/float64(b.N), "MB-RSS")
		})
	}
}
