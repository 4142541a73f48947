package kubernetes

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
)

func service(ns, name string) *engine.Resource {
	return &engine.Resource{
		ID: fmt.Sprintf("v1:Service:%s:%s", ns, name), Type: engine.Kubernetes,
		Attributes: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{
				"type":     "ClusterIP",
				"selector": map[string]any{"app": name},
				"ports":    []any{map[string]any{"port": int64(80), "targetPort": int64(8080)}},
			},
		},
	}
}

func byID(results []drift.Result) map[string]drift.Result {
	out := map[string]drift.Result{}
	for _, r := range results {
		out[r.ID] = r
	}
	return out
}

// TestDriftAgainstApiserver: right after an apply nothing is drift (the
// apiserver's defaults — strategy, clusterIP, terminationGracePeriodSeconds —
// are not kumo's fields); after another manager changes a ConfigMap key and the
// replicas and deletes the Service, exactly those three are reported, with
// paths, values and the manager that owns the live value.
func TestDriftAgainstApiserver(t *testing.T) {
	c, rt, ns := setup(t)
	spec := []*engine.Resource{
		namespace(ns),
		configMap(ns, "settings", map[string]any{"color": "blue", "size": "m"}),
		deployment(ns, "web", 2),
		service(ns, "web"),
	}
	for _, r := range spec[1:] {
		mustApply(t, rt, r)
	}
	ctx := context.Background()
	for _, r := range rt.Drift(ctx, spec, runtime.DriftOptions{}) {
		if r.Status != drift.InSync {
			t.Errorf("%s right after apply: %s %v %s", r.ID, r.Status, r.Fields, r.Error)
		}
	}

	dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
	patch := func(gvr schema.GroupVersionResource, name, manager, body string) {
		t.Helper()
		_, err := dyn.Resource(gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: manager})
		if err != nil {
			t.Fatal(err)
		}
	}
	patch(configMaps, "settings", "kubectl-edit", `{"data":{"color":"red"}}`)
	patch(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "web", "kubectl-scale", `{"spec":{"replicas":5}}`)
	if err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "services"}).Namespace(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	got := byID(rt.Drift(ctx, spec, runtime.DriftOptions{}))
	if r := got[spec[0].ID]; r.Status != drift.InSync {
		t.Errorf("namespace: %+v", r)
	}
	want := map[string]drift.Field{
		spec[1].ID: {Path: "/data/color", Recorded: "blue", Live: "red", Manager: "kubectl-edit"},
		spec[2].ID: {Path: "/spec/replicas", Recorded: int64(2), Live: int64(5), Manager: "kubectl-scale"},
	}
	for id, f := range want {
		r := got[id]
		if r.Status != drift.Drifted || len(r.Fields) != 1 || fmt.Sprint(r.Fields[0]) != fmt.Sprint(f) {
			t.Errorf("%s: %s %+v, want drifted with %+v", id, r.Status, r.Fields, f)
		}
	}
	if r := got[spec[3].ID]; r.Status != drift.Missing {
		t.Errorf("deleted service: %+v, want missing", r)
	}
}

// TestDriftUnreadable: a kind the cluster does not serve (a deleted CRD) is an
// error result naming it, never in sync.
func TestDriftUnreadable(t *testing.T) {
	_, rt, ns := setup(t)
	gone := &engine.Resource{ID: "example.com/v1:Widget:" + ns + ":w", Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": ns},
	}}
	r := rt.Drift(context.Background(), []*engine.Resource{gone}, runtime.DriftOptions{})[0]
	if r.Status != drift.Error || r.Error == "" {
		t.Errorf("%+v, want an error", r)
	}
}

// TestDriftRefusedDryRun: an APIService edited out of band to skip TLS
// verification without its caBundle cannot take kumo's caBundle back (both
// set is invalid), so the drift check's dry run is refused. The check still
// names the drifted field, with the apiserver's reason, rather than a bare
// error.
func TestDriftRefusedDryRun(t *testing.T) {
	c, rt, ns := setup(t)
	name := "v1alpha1." + ns + ".example.com"
	svc := &engine.Resource{
		ID: "apiregistration.k8s.io/v1:APIService::" + name, Type: engine.Kubernetes,
		Attributes: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"group": ns + ".example.com", "version": "v1alpha1",
				"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
				"caBundle": "Q0E=",
				"service":  map[string]any{"name": "api", "namespace": ns},
			},
		},
	}
	mustApply(t, rt, svc)
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
	t.Cleanup(func() { _ = dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if _, err := dyn.Resource(gvr).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"spec":{"caBundle":null,"insecureSkipTLSVerify":true}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	r := rt.Drift(ctx, []*engine.Resource{svc}, runtime.DriftOptions{})[0]
	if r.Status != drift.Drifted {
		t.Fatalf("%+v, want drifted", r)
	}
	if len(r.Fields) != 1 || r.Fields[0].Path != "/spec/caBundle" || !r.Fields[0].Absent {
		t.Errorf("fields %+v, want /spec/caBundle absent", r.Fields)
	}
	if !strings.Contains(r.Error, "insecureSkipTLSVerify") {
		t.Errorf("error %q, want the apiserver's refusal naming insecureSkipTLSVerify", r.Error)
	}
}

// TestDriftDryRunsOnlyWhatChanged: a check of objects no one touched since the
// apply lists them and asks nothing else; an object changed out of band is the
// only one dry-run, and is still reported with its field.
func TestDriftDryRunsOnlyWhatChanged(t *testing.T) {
	c, _, ns := setup(t)
	var log requestLog
	rc := rest.CopyConfig(c.RESTConfig())
	rc.WrapTransport = log.wrap
	rt, err := NewForConfig(rc, 0)
	if err != nil {
		t.Fatal(err)
	}
	spec := make([]*engine.Resource, 30)
	for i := range spec {
		spec[i] = mustApply(t, rt, configMap(ns, fmt.Sprintf("cm-%02d", i), map[string]any{"k": fmt.Sprint(i)}))
	}
	ctx := context.Background()
	log.take()
	for _, r := range rt.Drift(ctx, spec, runtime.DriftOptions{}) {
		if r.Status != drift.InSync {
			t.Errorf("%s right after apply: %s %v %s", r.ID, r.Status, r.Fields, r.Error)
		}
	}
	list := "GET /api/v1/namespaces/" + ns + "/configmaps"
	if got := log.take(); len(got) != 1 || got[0] != list {
		t.Errorf("requests of a check with nothing changed: %q, want one list %q", got, list)
	}

	dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
	if _, err := dyn.Resource(configMaps).Namespace(ns).Patch(ctx, "cm-07", types.MergePatchType,
		[]byte(`{"data":{"k":"changed"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	got := byID(rt.Drift(ctx, spec, runtime.DriftOptions{}))
	if r := got[spec[7].ID]; r.Status != drift.Drifted || len(r.Fields) != 1 || r.Fields[0].Path != "/data/k" {
		t.Errorf("changed object: %+v, want /data/k drifted", r)
	}
	patch := "PATCH /api/v1/namespaces/" + ns + "/configmaps/cm-07"
	if reqs := log.take(); len(reqs) != 2 || reqs[0] != list || reqs[1] != patch {
		t.Errorf("requests of a check with one object changed: %q, want %q then its dry-run %q", reqs, list, patch)
	}
}

// BenchmarkDrift1000ConfigMaps checks 1,000 ConfigMaps of one namespace and
// reports the apiserver requests one check makes (the pages of one list: none
// of them changed, so nothing is dry-run).
func BenchmarkDrift1000ConfigMaps(b *testing.B) {
	c := localclustertest.Start(b)
	ns := localclustertest.Namespace(b)
	var requests atomic.Int64
	rc := rest.CopyConfig(c.RESTConfig())
	rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			requests.Add(1)
			return rt.RoundTrip(r)
		})
	}
	rt, err := NewForConfig(rc, 0)
	if err != nil {
		b.Fatal(err)
	}
	mustApply(b, rt, namespace(ns))
	spec := make([]*engine.Resource, 1000)
	for i := range spec {
		spec[i] = configMap(ns, fmt.Sprintf("cm-%04d", i), map[string]any{"k": fmt.Sprint(i)})
	}
	ctx := context.Background()
	sem := make(chan struct{}, 20)
	errs := make(chan error, len(spec))
	for _, r := range spec {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			_, err := rt.Apply(ctx, r, runtime.ApplyOptions{})
			errs <- err
		}()
	}
	for range spec {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	requests.Store(0)
	for b.Loop() {
		for _, r := range rt.Drift(ctx, spec, runtime.DriftOptions{Parallelism: 20}) {
			if r.Status != drift.InSync {
				b.Fatalf("%s: %s %v %s", r.ID, r.Status, r.Fields, r.Error)
			}
		}
	}
	b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/check")
}
