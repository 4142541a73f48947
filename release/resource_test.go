package release_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// cm is a ConfigMap in namespace "a" holding value.
func cm(name, value string) engine.Resource {
	return engine.Resource{ID: "v1:ConfigMap:a:" + name, Type: engine.Kubernetes, DependsOn: []string{"v1:Namespace:a"},
		Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "a"}, "data": map[string]any{"v": value}}}
}

// withRuntime returns a Manager over b whose runtime is a fresh fake.
func withRuntime(b backend.Backend) (*release.Manager, *fakeRuntime) {
	rt := newFakeRuntime()
	return release.New(b, rt, &runs{}), rt
}

// nodes returns the node input of id in the release info names.
func nodes(info release.Info) func(id string) release.Node {
	return func(id string) release.Node {
		return release.Node{Key: info.Key, SpecHash: info.SpecHash, PriorRevision: info.PriorRevision, ID: id}
	}
}

// started begins revision 1 of p/w over resources and returns the node input of id.
func started(t *testing.T, b backend.Backend, m *release.Manager, rs ...engine.Resource) func(id string) release.Node {
	t.Helper()
	info, err := m.Begin(ctx, begin("p", "w", "run-1", putSpec(t, b, rs...)))
	if err != nil {
		t.Fatal(err)
	}
	return nodes(info)
}

func TestPlanGraph(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, _ := withRuntime(b)
		a, x := ns("a"), cm("x", "1")
		spec := putSpec(t, b, x, a)
		in := release.PlanInput{Project: "p", Workspace: "w", SpecHash: spec}
		p, err := m.PlanGraph(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		want := release.Plan{Nodes: []release.PlanNode{{ID: a.ID, Type: engine.Kubernetes}, {ID: x.ID, Type: engine.Kubernetes, Deps: []int32{0}}}}
		if !reflect.DeepEqual(p, want) {
			t.Fatalf("plan %+v, want %+v", p, want)
		}
		if again, err := m.PlanGraph(ctx, in); err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("second PlanGraph = %+v, %v", again, err)
		}
		// A dependency on a resource the spec lacks is invalid, for good.
		in.SpecHash = putSpec(t, b, x)
		if _, err := m.PlanGraph(ctx, in); !errors.Is(err, release.ErrInvalid) {
			t.Fatalf("PlanGraph of a spec with a missing dependency: %v, want ErrInvalid", err)
		}
	})
}

func TestApplyPreviewDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, rt := withRuntime(b)
		a := ns("a")
		node := started(t, b, m, a)

		change, refresh, err := m.Preview(ctx, node(a.ID))
		if err != nil || change.Action != engine.Create || refresh {
			t.Fatalf("Preview = %+v, %v, %v; want a create and nothing to refresh", change, refresh, err)
		}
		// Applying twice (a retry) gives one object and one state entry.
		for range 2 {
			if _, err := m.Apply(ctx, node(a.ID)); err != nil {
				t.Fatal(err)
			}
		}
		if !rt.has(a.ID) {
			t.Fatal("Apply did not create the object")
		}
		entries, err := b.ListStateEntries(ctx, node(a.ID).Key)
		if err != nil || len(entries) != 1 || entries[a.ID].Resource == nil {
			t.Fatalf("entries after Apply: %+v, %v", entries, err)
		}
		// A preview writes nothing. With no prior state, the object that is
		// live as the spec says is one to adopt: its apply records it, so
		// there is nothing to refresh.
		if err := b.ClearStateEntries(ctx, node(a.ID).Key); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			change, refresh, err := m.Preview(ctx, node(a.ID))
			if err != nil || change.Action != engine.Adopt {
				t.Fatalf("Preview after Apply with no prior state = %+v, %v; want adopt", change, err)
			}
			if refresh {
				t.Fatal("Preview of a resource to adopt: a refresh, want none")
			}
			if entries, err := b.ListStateEntries(ctx, node(a.ID).Key); err != nil || len(entries) != 0 {
				t.Fatalf("Preview wrote state entries: %+v, %v", entries, err)
			}
		}
		// Only what a prior release recorded can be deleted.
		if err := m.Delete(ctx, node(a.ID)); !errors.Is(err, release.ErrInvalid) || err.Error() != "resource v1:Namespace:a is not in the prior state" {
			t.Fatalf("Delete without prior state: %v, want ErrInvalid", err)
		}
	})
}

// TestDeleteAndCompensate runs revision 2 over revision 1's state: deletes are
// idempotent, and undoing an update restores the prior object.
func TestDeleteAndCompensate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, rt := withRuntime(b)
		a, x := ns("a"), cm("x", "1")
		node := started(t, b, m, a, x)
		for _, id := range []string{a.ID, x.ID} {
			if _, err := m.Apply(ctx, node(id)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: node(a.ID).Key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		x2 := cm("x", "2")
		info, err := m.Begin(ctx, begin("p", "w", "run-2", putSpec(t, b, x2)))
		if err != nil {
			t.Fatal(err)
		}
		node2 := nodes(info)
		if _, err := m.Apply(ctx, node2(x.ID)); err != nil {
			t.Fatal(err)
		}
		if got := object(rt, x.ID)["data"]; !reflect.DeepEqual(got, map[string]any{"v": "2"}) {
			t.Fatalf("after apply: data %v", got)
		}
		for range 2 {
			if err := m.Compensate(ctx, node2(x.ID), engine.Update); err != nil {
				t.Fatal(err)
			}
		}
		if got := object(rt, x.ID)["data"]; !reflect.DeepEqual(got, map[string]any{"v": "1"}) {
			t.Fatalf("after undoing the update: data %v, want the prior value", got)
		}
		for range 2 {
			if err := m.Delete(ctx, node2(a.ID)); err != nil {
				t.Fatal(err)
			}
		}
		if rt.has(a.ID) {
			t.Fatal("Delete left the object")
		}
		n, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded})
		if err != nil || n != 1 {
			t.Fatalf("Finish = %d, %v; want 1 resource (a deleted)", n, err)
		}
		st := getRelease(t, b, 2).State.Resources
		if len(st) != 1 || !reflect.DeepEqual(st[0].Attributes["data"], map[string]any{"v": "1"}) {
			t.Fatalf("state after compensation: %+v", st)
		}
	})
}

func TestApplyRejected(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, rt := withRuntime(b)
		a := ns("a")
		rt.Reject(a.ID)
		node := started(t, b, m, a)
		_, err := m.Apply(ctx, node(a.ID))
		if !errors.Is(err, release.ErrResourceFailed) || err.Error() != "apply v1:Namespace:a: rejected" {
			t.Fatalf("Apply of a rejected resource: %v, want ErrResourceFailed with the runtime's message", err)
		}
	})
}

// object is the live attributes of id in rt (nil when absent).
func object(rt *fakeRuntime, id string) map[string]any {
	attrs, _ := rt.Object(id)
	return attrs
}
