package release_test

import (
	"reflect"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

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
