package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
	"github.com/kumoproj/kumo/runspec"
)

// installSpec is an install-manifest-sized spec: a Namespace, n CRDs whose
// schemas carry ~60 KB of descriptions each (as generated CRDs do), and a
// ConfigMap per CRD.
func installSpec(ns string, n int) *engine.Spec {
	spec := configMaps(ns, 0, false)
	doc := strings.Repeat("This field is documented at length, as generated CRDs are. ", 1100)[:60_000]
	for i := range n {
		group := fmt.Sprintf("g%02d.%s.example.com", i, ns)
		name := "widgets." + group
		spec.Resources = append(spec.Resources, engine.Resource{
			ID: engine.KubernetesID("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name), Type: engine.Kubernetes,
			Attributes: map[string]any{
				"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": name},
				"spec": map[string]any{
					"group": group, "scope": "Namespaced",
					"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
					"versions": []any{map[string]any{
						"name": "v1", "served": true, "storage": true,
						"schema": map[string]any{"openAPIV3Schema": map[string]any{
							"type": "object", "description": doc,
							"properties": map[string]any{"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
						}},
					}},
				},
			},
		})
		cm := fmt.Sprintf("config-%02d", i)
		spec.Resources = append(spec.Resources, engine.Resource{
			ID: engine.KubernetesID("v1", "ConfigMap", ns, cm), Type: engine.Kubernetes,
			DependsOn: []string{engine.KubernetesID("v1", "Namespace", "", ns)},
			Attributes: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": cm, "namespace": ns},
				"data":     map[string]any{"settings": doc[:4000]},
			},
		})
	}
	return spec
}

// TestLargeSpecHistorySize applies a ~1 MB spec and measures the run's
// Temporal history. The spec travels by digest, so no event may come near
// Temporal's 512 KB payload warning; the figures are logged.
func TestLargeSpecHistorySize(t *testing.T) {
	if testing.Short() {
		t.Skip("applies a 1 MB spec to a real apiserver")
	}
	cluster := localclustertest.Start(t)
	ns := localclustertest.Namespace(t)
	spec := installSpec(ns, 16)
	data, err := engine.MarshalSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := client.Open(client.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	run, err := c.Apply(ctx, client.Request{
		Project: ns, Workspace: "default", Spec: spec, AutoApprove: true, Parallelism: 10,
		Settings: runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := run.Wait(ctx); err != nil || res.Phase != engine.PhaseSucceeded {
		t.Fatalf("apply: %+v %v", res, err)
	}
	if len(data) < 1_000_000 {
		t.Fatalf("spec is %d bytes, want at least 1 MB", len(data))
	}
	checkHistory(t, run, "create", len(data), len(spec.Resources))

	// An update that changes 20,000 fields of one ConfigMap: the preview's
	// field list must stay bounded too.
	cm := &spec.Resources[len(spec.Resources)-1]
	many := map[string]any{}
	for i := range 20_000 {
		many[fmt.Sprintf("key-%05d", i)] = fmt.Sprintf("value-%05d-%s", i, strings.Repeat("x", 20))
	}
	cm.Attributes["data"] = many
	run, err = c.Apply(ctx, client.Request{
		Project: ns, Workspace: "default", Spec: spec, AutoApprove: true, Parallelism: 10,
		Settings: runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := run.Wait(ctx); err != nil || res.Phase != engine.PhaseSucceeded {
		t.Fatalf("update: %+v %v", res, err)
	}
	checkHistory(t, run, "update of 20,000 fields", len(data), len(spec.Resources))
}

func checkHistory(t *testing.T, run *client.Run, what string, specBytes, resources int) {
	t.Helper()
	size, err := run.HistorySize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, spec %d bytes, %d resources: history %d events, %d bytes, largest event %d bytes",
		what, specBytes, resources, size.Events, size.Bytes, size.LargestEvent)
	const payloadWarning = 512 << 10
	if size.LargestEvent >= payloadWarning {
		t.Errorf("%s: largest history event is %d bytes, at or over Temporal's %d-byte payload warning", what, size.LargestEvent, payloadWarning)
	}
	if size.Bytes >= specBytes {
		t.Errorf("%s: history (%d bytes) is as large as the spec (%d bytes): something scales with the spec", what, size.Bytes, specBytes)
	}
}
