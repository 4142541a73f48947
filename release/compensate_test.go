package release_test

import (
	"context"
	"errors"
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

// TestCompensateBatch: a batch of undos goes on after the undos an earlier
// attempt did; an undo that fails for good is its resource's outcome and the
// batch goes on; one that fails for now stops the batch after the undos
// before it, and a retry goes on from there; a cancel stops it between two
// resources.
func TestCompensateBatch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, rt := withRuntime(b)
		rs := []engine.Resource{cm("a", "1"), cm("b", "1"), cm("c", "1"), cm("d", "1")}
		node := started(t, b, m, rs...)
		ids := make([]string, len(rs))
		for i, r := range rs {
			ids[i] = r.ID
			if _, err := m.Apply(ctx, node(r.ID)); err != nil {
				t.Fatal(err)
			}
		}
		undos := func(action engine.Action, ids ...string) []release.Undo {
			us := make([]release.Undo, len(ids))
			for i, id := range ids {
				us[i] = release.Undo{Node: node(id), Action: action}
			}
			return us
		}

		// a and b were undone by the attempt before: only c is.
		var reported []string
		out, err := m.CompensateBatch(ctx, undos(engine.Create, ids[:3]...), []release.Outcome{{ID: ids[0]}, {ID: ids[1]}}, func(os []release.Outcome) {
			reported = append(reported, outcomeIDs(os)...)
		})
		if err != nil || !reflect.DeepEqual(outcomeIDs(out), ids[:3]) || out[2].Err != nil {
			t.Fatalf("CompensateBatch = %+v, %v; want a, b (done before) and c undone", out, err)
		}
		if !reflect.DeepEqual(reported, ids[:3]) {
			t.Errorf("reported %v, want every outcome so far after c's undo", reported)
		}
		if !rt.has(ids[0]) || !rt.has(ids[1]) || rt.has(ids[2]) {
			t.Fatalf("objects %v, want only c deleted", rt.IDs())
		}

		// d's update cannot be undone (there is no prior state): a is undone after it.
		out, err = m.CompensateBatch(ctx, append(undos(engine.Update, ids[3]), undos(engine.Create, ids[0])...), nil, nil)
		if err != nil || len(out) != 2 || !errors.Is(out[0].Err, release.ErrResourceFailed) || out[1].Err != nil {
			t.Fatalf("CompensateBatch = %+v, %v; want d failed for good and a undone", out, err)
		}
		if rt.has(ids[0]) {
			t.Error("a not deleted after d's undo failed")
		}

		// b's delete fails once: the batch stops, having undone c.
		rt.FailTransiently(ids[1], 1)
		cb := undos(engine.Create, ids[2], ids[1])
		out, err = m.CompensateBatch(ctx, cb, nil, nil)
		if err == nil || release.FailedForGood(err) || !reflect.DeepEqual(outcomeIDs(out), ids[2:3]) {
			t.Fatalf("CompensateBatch with a transient failure = %+v, %v; want c undone, then a failure to retry", out, err)
		}
		if !rt.has(ids[1]) {
			t.Fatal("b deleted although its delete failed")
		}
		if out, err = m.CompensateBatch(ctx, cb, out, nil); err != nil || len(out) != 2 || rt.has(ids[1]) {
			t.Fatalf("retry = %+v, %v, b exists %v; want c (done before) and b undone", out, err, rt.has(ids[1]))
		}

		// What other resources did is not gone on from.
		if _, err := m.CompensateBatch(ctx, cb, []release.Outcome{{ID: ids[3]}}, nil); !errors.Is(err, release.ErrInvalid) {
			t.Errorf("a batch went on after another batch's outcomes: %v, want ErrInvalid", err)
		}

		// A cancelled batch stops before its next resource.
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if out, err := m.CompensateBatch(cancelled, undos(engine.Create, ids[3]), nil, nil); !errors.Is(err, release.ErrStopped) || len(out) != 0 || !rt.has(ids[3]) {
			t.Errorf("cancelled CompensateBatch = %+v, %v; want nothing undone, ErrStopped", out, err)
		}
	})
}
