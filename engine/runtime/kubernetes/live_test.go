package kubernetes

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// TestReadLive: right after an apply, the objects read by one list per kind
// and namespace are unchanged (server defaults are not kumo's); a changed
// value, a key dropped from desired, an object not there and a kind not served
// each read as what they are; what cannot be told from the object is not
// called unchanged. Every unchanged verdict agrees with a dry-run.
func TestReadLive(t *testing.T) {
	c, rt, ns := setup(t)
	applied := []*engine.Resource{
		configMap(ns, "a", map[string]any{"k": "1"}),
		configMap(ns, "b", map[string]any{"k": "1", "gone": "x"}),
		configMap(ns, "c", map[string]any{"k": "1"}),
		deployment(ns, "web", 2),
		service(ns, "web"),
	}
	for _, r := range applied {
		mustApply(t, rt, r)
	}
	// Someone else labels the Namespace kumo applied bare.
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Patch(ctx, ns, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"team":"a"}}}`), metav1.PatchOptions{FieldManager: "kubectl-label"}); err != nil {
		t.Fatal(err)
	}
	desired := []*engine.Resource{
		applied[0],
		configMap(ns, "b", map[string]any{"k": "1"}), // "gone" dropped: an apply removes it
		configMap(ns, "c", map[string]any{"k": "2"}), // a new value
		applied[3],
		applied[4],
		configMap(ns, "absent", map[string]any{"k": "1"}),
		{ID: "example.com/v1:Widget:" + ns + ":w", Type: engine.Kubernetes, Attributes: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": ns}}},
		// Named and nothing else: kumo owns no field of it (the apiserver
		// keeps no empty entry), and an apply leaves the label as it is.
		namespace(ns),
	}
	got := rt.ReadLive(ctx, desired, runtime.ReadLiveOptions{})
	want := []struct{ live, unchanged, err bool }{
		{true, true, false}, {true, false, false}, {true, false, false}, {true, true, false},
		// A Service's ports are keyed by a protocol desired does not say:
		// the apiserver defaults it to TCP, which the key says.
		{true, true, false},
		{false, false, false}, {false, false, true},
		{true, true, false},
	}
	for i, w := range want {
		g := got[i]
		if (g.Resource != nil) != w.live || g.Unchanged != w.unchanged || (g.Err != nil) != w.err {
			t.Errorf("%s: live %v unchanged %v err %v; want live %v unchanged %v err %v", desired[i].ID, g.Resource != nil, g.Unchanged, g.Err, w.live, w.unchanged, w.err)
		}
		if g.Resource != nil {
			if md := g.Resource.Attributes["metadata"].(map[string]any); md["managedFields"] != nil {
				t.Errorf("%s: managedFields kept", desired[i].ID)
			}
		}
		if !g.Unchanged {
			continue
		}
		// The dry-run agrees: nothing would change.
		dry, err := rt.Apply(ctx, desired[i], runtime.ApplyOptions{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if c := engine.Diff(desired[i].ID, engine.Kubernetes, dry, g.Resource, nil); len(c.Fields) > 0 {
			t.Errorf("%s read as unchanged, but a dry-run changes %v", desired[i].ID, c.Fields)
		}
	}
	if fmt.Sprint(got[0].Resource.DependsOn) != fmt.Sprint(applied[0].DependsOn) {
		t.Errorf("live resource lost the desired dependsOn: %v", got[0].Resource.DependsOn)
	}
}

// TestReadLiveSnapshot: calls with one snapshot share its lists (an object
// created after the first call stays unseen); another snapshot lists anew.
func TestReadLiveSnapshot(t *testing.T) {
	_, rt, ns := setup(t)
	a, b := configMap(ns, "a", map[string]any{"k": "1"}), configMap(ns, "b", map[string]any{"k": "1"})
	mustApply(t, rt, a)
	ctx := context.Background()
	read := func(snapshot string) []runtime.Live {
		return rt.ReadLive(ctx, []*engine.Resource{a, b}, runtime.ReadLiveOptions{Snapshot: snapshot})
	}
	if got := read("run-1"); got[0].Resource == nil || got[1].Resource != nil {
		t.Fatalf("first read: a live %v, b live %v; want a only", got[0].Resource != nil, got[1].Resource != nil)
	}
	mustApply(t, rt, b)
	if got := read("run-1"); got[1].Resource != nil {
		t.Fatal("the same snapshot listed anew: b, created since, was seen")
	}
	if got := read("run-2"); got[1].Resource == nil || !got[1].Unchanged {
		t.Fatalf("another snapshot: b live %v unchanged %v; want live and unchanged", got[1].Resource != nil, got[1].Unchanged)
	}
	// The shared copies are not changed by a reader: a is read whole again.
	if got := read("run-1"); got[0].Resource == nil || !got[0].Unchanged {
		t.Fatal("a read from the shared list a second time lost its managedFields")
	}
}
