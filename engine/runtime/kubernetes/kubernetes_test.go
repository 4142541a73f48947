package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
)

func TestMain(m *testing.M) { localclustertest.Main(m, localclustertest.Workloads) }

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// setup returns the shared cluster, a Runtime for it and a fresh namespace.
func setup(t testing.TB) (*localcluster.Cluster, *Runtime, string) {
	t.Helper()
	c := localclustertest.Start(t)
	rt, err := New(Config{Kubeconfig: c.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	ns := localclustertest.Namespace(t)
	mustApply(t, rt, namespace(ns))
	return c, rt, ns
}

func mustApply(t testing.TB, rt *Runtime, res *engine.Resource) *engine.Resource {
	t.Helper()
	out, err := rt.Apply(context.Background(), res, runtime.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func namespace(name string) *engine.Resource {
	return &engine.Resource{
		ID:   "v1:Namespace:" + name,
		Type: engine.Kubernetes,
		Attributes: map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": name},
		},
	}
}

func configMap(ns, name string, data map[string]any) *engine.Resource {
	return &engine.Resource{
		ID:   fmt.Sprintf("v1:ConfigMap:%s:%s", ns, name),
		Type: engine.Kubernetes,
		Attributes: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"data":     data,
		},
		DependsOn:  []string{"v1:Namespace:" + ns},
		Extensions: map[string]any{"note": "kept"},
	}
}

func deployment(ns, name string, replicas int64) *engine.Resource {
	labels := map[string]any{"app": name}
	return &engine.Resource{
		ID:   fmt.Sprintf("apps/v1:Deployment:%s:%s", ns, name),
		Type: engine.Kubernetes,
		Attributes: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{
				"replicas": replicas,
				"selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{
					"metadata": map[string]any{"labels": labels},
					"spec": map[string]any{"containers": []any{
						map[string]any{"name": "web", "image": "nginx:1.27"},
					}},
				},
			},
		},
	}
}

func resourceVersion(t testing.TB, r *engine.Resource) string {
	t.Helper()
	md, _ := r.Attributes["metadata"].(map[string]any)
	rv, _ := md["resourceVersion"].(string)
	if rv == "" {
		t.Fatalf("%s: no resourceVersion in %v", r.ID, md)
	}
	return rv
}

func TestApplyCreatesWithFieldManagerKumo(t *testing.T) {
	c, rt, ns := setup(t)
	in := configMap(ns, "settings", map[string]any{"color": "blue"})
	out := mustApply(t, rt, in)
	if out.ID != in.ID || out.Type != in.Type || len(out.DependsOn) != 1 || out.Extensions["note"] != "kept" {
		t.Errorf("result lost ID/Type/DependsOn/Extensions: %+v", out)
	}
	md := out.Attributes["metadata"].(map[string]any)
	if _, ok := md["managedFields"]; ok {
		t.Error("result has metadata.managedFields")
	}
	if md["uid"] == "" || out.Attributes["data"].(map[string]any)["color"] != "blue" {
		t.Errorf("unexpected result %v", out.Attributes)
	}

	dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
	live, err := dyn.Resource(configMaps).Namespace(ns).Get(context.Background(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, mf := range live.GetManagedFields() {
		managers = append(managers, fmt.Sprintf("%s/%s", mf.Manager, mf.Operation))
	}
	if len(managers) != 1 || managers[0] != "kumo/Apply" {
		t.Errorf("managedFields managers = %v, want [kumo/Apply]", managers)
	}

	read, err := rt.Read(context.Background(), in)
	if err != nil || read == nil {
		t.Fatalf("Read = %v, %v", read, err)
	}
	if _, ok := read.Attributes["metadata"].(map[string]any)["managedFields"]; ok {
		t.Error("Read result has metadata.managedFields")
	}
}

func TestReapplyUnchangedKeepsResourceVersion(t *testing.T) {
	_, rt, ns := setup(t)
	first := mustApply(t, rt, configMap(ns, "same", map[string]any{"k": "v"}))
	// Applying the returned object (as a rollback to recorded state does, with
	// uid, resourceVersion and the rest) must be a no-op as well.
	for _, again := range []*engine.Resource{configMap(ns, "same", map[string]any{"k": "v"}), first} {
		second := mustApply(t, rt, again)
		if a, b := resourceVersion(t, first), resourceVersion(t, second); a != b {
			t.Errorf("resourceVersion changed on unchanged re-apply: %s -> %s", a, b)
		}
	}
	changed := mustApply(t, rt, configMap(ns, "same", map[string]any{"k": "w"}))
	if resourceVersion(t, first) == resourceVersion(t, changed) {
		t.Error("resourceVersion unchanged after a change")
	}
}

func TestDryRunDoesNotCreate(t *testing.T) {
	_, rt, ns := setup(t)
	in := configMap(ns, "dry", map[string]any{"k": "v"})
	out, err := rt.Apply(context.Background(), in, runtime.ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Attributes["data"].(map[string]any)["k"] != "v" {
		t.Errorf("dry-run result %v", out.Attributes)
	}
	if got, err := rt.Read(context.Background(), in); !errors.Is(err, runtime.ErrNotFound) || got != nil {
		t.Fatalf("after dry-run Read = %v, %v; want nil, not found", got, err)
	}
}

func TestApplyNamespaceAndDeployment(t *testing.T) {
	_, rt, ns := setup(t)
	out := mustApply(t, rt, deployment(ns, "web", 2))
	spec := out.Attributes["spec"].(map[string]any)
	if spec["replicas"] != int64(2) || spec["strategy"] == nil { // strategy: a server default
		t.Errorf("unexpected spec %v", spec)
	}
	live, err := rt.Read(context.Background(), namespace(ns))
	if err != nil || live == nil {
		t.Fatalf("Read namespace = %v, %v", live, err)
	}
	if phase := live.Attributes["status"].(map[string]any)["phase"]; phase != "Active" {
		t.Errorf("namespace phase %v", phase)
	}
	// Read by ID alone (no attributes), as for a resource known only by its ID.
	byID, err := rt.Read(context.Background(), &engine.Resource{ID: "apps/v1:Deployment:" + ns + ":web"})
	if err != nil || byID == nil {
		t.Fatalf("Read by ID = %v, %v", byID, err)
	}
}

func TestInvalidDeploymentIsPermanent(t *testing.T) {
	_, rt, ns := setup(t)
	in := deployment(ns, "bad", -1)
	_, err := rt.Apply(context.Background(), in, runtime.ApplyOptions{})
	if err == nil {
		t.Fatal("apply of replicas -1 succeeded")
	}
	t.Log(err)
	if !runtime.IsPermanent(err) {
		t.Error("error is not permanent")
	}
	for _, want := range []string{in.ID, "spec.replicas", "Invalid value: -1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestUnknownKindIsPermanent(t *testing.T) {
	_, rt, ns := setup(t)
	in := &engine.Resource{ID: "example.com/v1:Widget:" + ns + ":w", Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": ns},
	}}
	_, err := rt.Apply(context.Background(), in, runtime.ApplyOptions{})
	if err == nil || !runtime.IsPermanent(err) {
		t.Fatalf("err = %v, want permanent", err)
	}
	t.Log(err)
	for _, want := range []string{in.ID, "example.com/v1, Kind=Widget"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if got, err := rt.Read(context.Background(), in); got != nil || !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Read of unknown kind = %v, %v; want nil, not found", got, err)
	}
	if err := rt.Delete(context.Background(), in); err != nil {
		t.Errorf("Delete of unknown kind = %v", err)
	}
}

func TestMissingNamespaceIsRetryable(t *testing.T) {
	_, rt, _ := setup(t)
	_, err := rt.Apply(context.Background(), configMap("no-such-ns-kumo", "x", nil), runtime.ApplyOptions{})
	if err == nil || runtime.IsPermanent(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
	t.Log(err)
}

// TestDryRunIntoANamespaceNotYetCreated: a dry run of an object whose
// namespace does not exist says so (NamespaceMissingError), with the object as
// written for a preview whose spec creates the namespace; once the namespace
// exists the dry-run goes through the apiserver again.
func TestDryRunIntoANamespaceNotYetCreated(t *testing.T) {
	_, rt, _ := setup(t)
	ns := localclustertest.Namespace(t)
	cm := configMap(ns, "x", map[string]any{"k": "v"})
	_, err := rt.Apply(context.Background(), cm, runtime.ApplyOptions{DryRun: true})
	var missing *runtime.NamespaceMissingError
	if !errors.As(err, &missing) || missing.Namespace != ns || missing.Planned == nil {
		t.Fatalf("dry-run into a missing namespace: %v, want a NamespaceMissingError naming %s with the object as written", err, ns)
	}
	out := missing.Planned
	if got, _, err := unstructured.NestedString(out.Attributes, "data", "k"); err != nil || got != "v" {
		t.Errorf("dry-run result %v (%v), want the object as written", out.Attributes, err)
	}
	if _, found, err := unstructured.NestedString(out.Attributes, "metadata", "uid"); err != nil || found {
		t.Errorf("dry-run into a missing namespace came from the apiserver: %v (%v)", out.Attributes, err)
	}
	mustApply(t, rt, namespace(ns))
	out, err = rt.Apply(context.Background(), cm, runtime.ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, err := unstructured.NestedString(out.Attributes, "metadata", "uid"); err != nil || !found {
		t.Errorf("dry-run after the namespace exists did not reach the apiserver: %v (%v)", out.Attributes, err)
	}
}

// TestCRDCreatedInTheSameRun checks that a kind whose CRD was created after the
// Runtime cached discovery is found.
func TestCRDCreatedInTheSameRun(t *testing.T) {
	_, rt, ns := setup(t) // setup's apply filled the discovery cache
	group := strings.ReplaceAll(ns, "-", "") + ".kumo.test"
	crd := &engine.Resource{ID: "apiextensions.k8s.io/v1:CustomResourceDefinition:gadgets." + group, Type: engine.Kubernetes,
		Attributes: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "gadgets." + group},
			"spec": map[string]any{
				"group": group, "scope": "Namespaced",
				"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
				"versions": []any{map[string]any{
					"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{
						"type": "object", "x-kubernetes-preserve-unknown-fields": true,
					}},
				}},
			},
		}}
	mustApply(t, rt, crd)
	t.Cleanup(func() {
		if err := rt.Delete(context.Background(), crd); err != nil {
			t.Errorf("delete the CRD: %v", err)
		}
	})
	waitFor(t, 30*time.Second, func() bool {
		live, err := rt.Read(context.Background(), crd)
		if err != nil || live == nil {
			return false
		}
		conds, _ := live.Attributes["status"].(map[string]any)["conditions"].([]any)
		for _, c := range conds {
			if c := c.(map[string]any); c["type"] == "Established" && c["status"] == "True" {
				return true
			}
		}
		return false
	})
	cr := &engine.Resource{ID: group + "/v1:Gadget:" + ns + ":g", Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": group + "/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g", "namespace": ns},
		"spec":     map[string]any{"size": 3, "name": "g"},
	}}
	mustApply(t, rt, cr)
	// Read back by list, it is found unchanged: no dry-run needed.
	if l := rt.ReadLive(context.Background(), []*engine.Resource{cr}, runtime.ReadLiveOptions{})[0]; l.Err != nil || !l.Unchanged {
		t.Errorf("custom resource read back: unchanged %v, err %v; want unchanged", l.Unchanged, l.Err)
	}
}

func TestReadAndDeleteAbsent(t *testing.T) {
	_, rt, ns := setup(t)
	in := configMap(ns, "absent", nil)
	if got, err := rt.Read(context.Background(), in); got != nil || !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Read absent = %v, %v; want nil, not found", got, err)
	}
	if err := rt.Delete(context.Background(), in); err != nil {
		t.Errorf("Delete absent = %v", err)
	}
	if err := rt.Delete(context.Background(), namespace("kumo-never-existed")); err != nil {
		t.Errorf("Delete absent namespace = %v", err)
	}
}

func TestDeleteNamespaceWaitsUntilGone(t *testing.T) {
	_, rt, ns := setup(t)
	cm := configMap(ns, "content", map[string]any{"k": "v"})
	mustApply(t, rt, cm)
	mustApply(t, rt, deployment(ns, "web", 1))
	begin := time.Now()
	if err := rt.Delete(context.Background(), namespace(ns)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(begin)
	t.Logf("namespace with content deleted in %v", took.Round(time.Millisecond))
	for _, r := range []*engine.Resource{namespace(ns), cm} {
		if got, err := rt.Read(context.Background(), r); got != nil || !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("after Delete, Read %s = %v, %v", r.ID, got != nil, err)
		}
	}
	if took > 30*time.Second {
		t.Errorf("namespace deletion took %v", took)
	}
}

func TestDeleteTimeoutNamesFinalizers(t *testing.T) {
	c, rt, ns := setup(t)
	held := configMap(ns, "held", nil)
	held.Attributes["metadata"].(map[string]any)["finalizers"] = []any{"kumo.test/hold"}
	recorded := mustApply(t, rt, held)

	short, err := New(Config{Kubeconfig: c.Kubeconfig, DeleteTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Handed the record (its UID the precondition); the retry below gets the
	// spec's object, read first.
	err = short.Delete(context.Background(), recorded)
	if err == nil {
		t.Fatal("Delete returned while a finalizer holds the object")
	}
	t.Log(err)
	want := "delete " + held.ID + ": still present after 1s (finalizers [kumo.test/hold])"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if runtime.IsPermanent(err) {
		t.Error("timeout must stay retryable")
	}
	dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
	if _, err := dyn.Resource(configMaps).Namespace(ns).Patch(context.Background(), "held",
		types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Delete(context.Background(), held); err != nil { // retry succeeds
		t.Fatal(err)
	}
}

func TestKubeconfigContextSelection(t *testing.T) {
	c, _, ns := setup(t)
	path := brokenKubeconfig(t, c)
	cm := configMap(ns, "ctx", map[string]any{"k": "v"})

	rt, err := New(Config{Kubeconfig: path, Context: localcluster.Name})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Apply(context.Background(), cm, runtime.ApplyOptions{}); err != nil {
		t.Errorf("with --context %s: %v", localcluster.Name, err)
	}

	broken, err := New(Config{Kubeconfig: path}) // current context: broken
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := broken.Read(ctx, cm); err == nil || runtime.IsPermanent(err) {
		t.Errorf("current context broken: err = %v, want a retryable connection error", err)
	} else {
		t.Log(err)
	}

	if _, err := New(Config{Kubeconfig: path, Context: "nope"}); err == nil {
		t.Error("unknown context accepted")
	}

	// KUBECONFIG may list several files; missing ones are skipped, like kubectl.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing")+string(os.PathListSeparator)+c.Kubeconfig)
	fromEnv, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := fromEnv.Read(context.Background(), cm); err != nil || got == nil {
		t.Errorf("via KUBECONFIG: Read = %v, %v", got, err)
	}
}

func waitFor(t testing.TB, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkApplyConfigMap measures one server-side apply creating a ConfigMap,
// applied one after another (go test -bench ApplyConfigMap -benchtime 200x).
func BenchmarkApplyConfigMap(b *testing.B) {
	_, rt, ns := setup(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, err := rt.Apply(ctx, configMap(ns, fmt.Sprintf("cm-%d", i), map[string]any{"i": fmt.Sprint(i)}), runtime.ApplyOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/apply")
}

// TestNoClientSideRateLimitUnlessAsked: a config without a QPS gets no client
// rate limiter (a fixed rate would pace a large apply; the run's parallelism
// bounds the calls in flight), one with a QPS keeps it.
func TestNoClientSideRateLimitUnlessAsked(t *testing.T) {
	for _, tc := range []struct {
		name    string
		qps     float32
		limited bool
	}{
		{"unset", 0, false},
		{"set", 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewForConfig(&rest.Config{Host: "https://127.0.0.1:1", QPS: tc.qps, Burst: 40}, 0)
			if err != nil {
				t.Fatal(err)
			}
			limiter := r.rest.(*rest.RESTClient).GetRateLimiter()
			if got := limiter != nil; got != tc.limited {
				t.Errorf("rate limiter %v, want limited=%v", limiter, tc.limited)
			}
			if tc.limited && limiter.QPS() != tc.qps {
				t.Errorf("QPS %v, want %v", limiter.QPS(), tc.qps)
			}
		})
	}
}

// TestAKindIsLookedUpOnce: after its first lookup a kind's mapping comes
// from the runtime's own cache, without searching discovery's groups again
// (which allocates at every call), until a lookup of an unknown kind resets
// discovery.
func TestAKindIsLookedUpOnce(t *testing.T) {
	_, rt, _ := setup(t)
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	first, err := rt.mapping(gvk)
	if err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		if m, err := rt.mapping(gvk); err != nil || m != first {
			t.Fatalf("mapping %v, %v: want the first one", m, err)
		}
	}); allocs != 0 {
		t.Errorf("a kind looked up before allocates %.0f times a lookup, want none (searched again)", allocs)
	}
	if _, err := rt.mapping(schema.GroupVersionKind{Group: "nothing.kumo.test", Version: "v1", Kind: "Nothing"}); !meta.IsNoMatchError(err) {
		t.Fatalf("an unknown kind: %v, want no match", err)
	}
	if m, err := rt.mapping(gvk); err != nil || m.Resource.Resource != "configmaps" {
		t.Fatalf("after a reset: %v, %v", m, err)
	}
}
