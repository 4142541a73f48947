package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
	"github.com/kumoproj/kumo/runspec"
)

// TestCheckDriftFilesTheRun: a drift check that finds drift is filed under
// KumoDrifted = true and KumoDriftCount, so the Web UI's query lists the stack.
func TestCheckDriftFilesTheRun(t *testing.T) {
	cluster := localclustertest.Start(t)
	ns := localclustertest.Namespace(t)
	ctx := context.Background()
	settings := runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig}
	c, err := Open(Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	spec := &engine.Spec{Resources: []engine.Resource{
		{ID: "v1:Namespace:" + ns, Type: engine.Kubernetes, Attributes: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}},
		{ID: "v1:ConfigMap:" + ns + ":c", Type: engine.Kubernetes, DependsOn: []string{"v1:Namespace:" + ns}, Attributes: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": ns}, "data": map[string]any{"k": "v"}}},
	}}
	run, err := c.Apply(ctx, Request{Project: ns, Workspace: "default", Spec: spec, AutoApprove: true, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	kube := k8s.NewForConfigOrDie(cluster.RESTConfig())
	if _, err := kube.CoreV1().ConfigMaps(ns).Patch(ctx, "c", types.MergePatchType, []byte(`{"data":{"k":"w"}}`), metav1.PatchOptions{FieldManager: "editor"}); err != nil {
		t.Fatal(err)
	}
	rep, err := c.CheckDrift(ctx, DriftRequest{Project: ns, Workspace: "default", Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts != (drift.Counts{Resources: 2, InSync: 1, Drifted: 1}) || rep.Resources[0].Fields[0].Manager != "editor" {
		t.Fatalf("report %+v", rep)
	}
	query := fmt.Sprintf(`KumoDrifted = true AND KumoDriftCount = 1 AND KumoOperation = "drift" AND KumoProject = %q`, ns)
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := c.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: query})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Executions) == 1 {
			if got := resp.Executions[0].Execution.RunId; got != rep.RunID {
				t.Errorf("query found run %s, want %s", got, rep.RunID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q found %d runs, want 1", query, len(resp.Executions))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
