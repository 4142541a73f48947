package activities

import (
	"context"
	"slices"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// TestPreviewDefersRefresh: revision 2 makes b, unchanged, depend on a, so
// its record is stale. PreviewResources with DeferRefresh and PreviewNode
// write nothing and name b; RefreshResources records it, twice the same;
// PreviewResources without the flag (runs started before it) records it at
// once, as before.
func TestPreviewDefersRefresh(t *testing.T) {
	ctx := context.Background()
	a, b, rt := withMemory(t)
	m := release.New(b, rt, nil)
	cm := func(name string, deps ...string) engine.Resource {
		return engine.Resource{ID: "v1:ConfigMap:ns:" + name, Type: engine.Kubernetes, DependsOn: deps,
			Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns"}}}
	}
	begin := func(run string, rs ...engine.Resource) release.Info {
		hash, err := b.PutSpec(ctx, &engine.Spec{Resources: rs})
		if err != nil {
			t.Fatal(err)
		}
		info, err := m.Begin(ctx, release.BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationApply, SpecHash: hash, WorkflowID: "kumo/p/w", RunID: run})
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	first := begin("run-1", cm("a"), cm("b"))
	for _, id := range []string{"v1:ConfigMap:ns:a", "v1:ConfigMap:ns:b"} {
		if _, err := m.Apply(ctx, release.Node{Key: first.Key, SpecHash: first.SpecHash, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Finish(ctx, release.FinishInput{Key: first.Key, Phase: engine.PhaseSucceeded}); err != nil {
		t.Fatal(err)
	}
	info := begin("run-2", cm("a"), cm("b", "v1:ConfigMap:ns:a"))
	in := BatchInput{Node: NodeInput{Key: info.Key, SpecHash: info.SpecHash, PriorRevision: info.PriorRevision},
		IDs: []string{"v1:ConfigMap:ns:a", "v1:ConfigMap:ns:b"}, DeferRefresh: true}
	entries := func() map[string]backend.StateEntry {
		t.Helper()
		es, err := b.ListStateEntries(ctx, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		return es
	}

	run := func(fn, in, out any) {
		t.Helper()
		if err := runActivity(a, fn, in, nil, out); err != nil {
			t.Fatal(err)
		}
	}
	var res PreviewResult
	run(a.PreviewResources, in, &res)
	if !slices.Equal(res.Refresh, []int{1}) || len(res.Changes) != 2 || res.Changes[1].Action != engine.UnChanged {
		t.Fatalf("deferred preview: %+v, want b unchanged and to refresh (position 1)", res)
	}
	node := in.Node
	node.ID = "v1:ConfigMap:ns:b"
	var one NodePreview
	run(a.PreviewNode, node, &one)
	if !one.Refresh || one.Change.Action != engine.UnChanged {
		t.Fatalf("PreviewNode of b: %+v, want unchanged and to refresh", one)
	}
	if es := entries(); len(es) != 0 {
		t.Fatalf("the previews wrote %+v", es)
	}

	var refreshed map[string]backend.StateEntry
	for range 2 {
		var r RefreshResult
		run(a.RefreshResources, BatchInput{Node: in.Node, IDs: in.IDs[1:]}, &r)
		es := entries()
		if r.Recorded != 1 || len(es) != 1 || !slices.Equal(es["v1:ConfigMap:ns:b"].Resource.DependsOn, []string{"v1:ConfigMap:ns:a"}) {
			t.Fatalf("RefreshResources: %+v, entries %+v; want b with its new dependsOn", r, es)
		}
		refreshed = es
	}

	if err := b.ClearStateEntries(ctx, info.Key); err != nil {
		t.Fatal(err)
	}
	in.DeferRefresh = false
	var before PreviewResult
	run(a.PreviewResources, in, &before)
	if es := entries(); len(before.Refresh) != 0 || len(es) != 1 || !slices.Equal(es["v1:ConfigMap:ns:b"].Resource.DependsOn, refreshed["v1:ConfigMap:ns:b"].Resource.DependsOn) {
		t.Fatalf("preview of a run before deferred refreshes: %+v, entries %+v; want b recorded at once", before, es)
	}
}
