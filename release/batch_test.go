package release_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// TestBatch: a batch applies its nodes in order and records them; a retried
// batch that is told what the first attempt did runs only the rest; a
// cancelled batch runs nothing more; a failing node ends the batch, with what
// came before it recorded.
func TestBatch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, rt := withRuntime(b)
		var rs []engine.Resource
		for i := range 5 {
			rs = append(rs, cm(fmt.Sprintf("x%d", i), "1"))
		}
		node := started(t, b, m, rs...)
		nodes := make([]release.Node, len(rs))
		for i, r := range rs {
			nodes[i] = node(r.ID)
		}
		var flushes [][]release.Outcome
		out, err := m.Batch(ctx, nodes[:3], nil, func(o []release.Outcome) { flushes = append(flushes, o) })
		if err != nil || len(out) != 3 {
			t.Fatalf("Batch = %d outcomes, %v", len(out), err)
		}
		for i, o := range out {
			if o.ID != rs[i].ID || o.Apply.Wait {
				t.Errorf("outcome %d: %+v, want %s with no wait", i, o, rs[i].ID)
			}
		}
		if len(flushes) == 0 || len(flushes[len(flushes)-1]) != 3 {
			t.Fatalf("flushes %v: the last should hold all 3 outcomes", flushes)
		}
		checkRecorded(t, b, nodes[0].Key, rs[:3]...)

		// A retry knowing the first two were done applies only the third.
		before := len(rt.Applied())
		if out, err := m.Batch(ctx, nodes[:3], out[:2], nil); err != nil || len(out) != 3 {
			t.Fatalf("retried Batch = %d outcomes, %v", len(out), err)
		}
		if got := rt.Applied()[before:]; !slices.Equal(got, []string{rs[2].ID}) {
			t.Fatalf("retried batch applied %v, want only %s", got, rs[2].ID)
		}
		if _, err := m.Batch(ctx, nodes[:3], []release.Outcome{{ID: rs[1].ID}}, nil); !errors.Is(err, release.ErrInvalid) {
			t.Fatalf("Batch told another resource was done first: %v, want ErrInvalid", err)
		}

		// Cancelled: nothing more runs.
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		before = len(rt.Applied())
		if out, err := m.Batch(cancelled, nodes[3:], nil, nil); !errors.Is(err, release.ErrStopped) || len(out) != 0 {
			t.Fatalf("cancelled Batch = %v, %v; want no outcome and ErrStopped", out, err)
		}
		if len(rt.Applied()) != before {
			t.Fatal("a cancelled batch applied something")
		}

		// The fifth fails for good: the fourth is done and recorded.
		rt.Reject(rs[4].ID)
		out, err = m.Batch(ctx, nodes[3:], nil, nil)
		if !errors.Is(err, release.ErrResourceFailed) || len(out) != 1 || out[0].ID != rs[3].ID {
			t.Fatalf("Batch with a rejected node = %+v, %v", out, err)
		}
		checkRecorded(t, b, nodes[0].Key, rs[:4]...)
	})
}

// TestBatchDeletes: a batch of deletes removes the resources and records
// their tombstones, which Finish folds into the release.
func TestBatchDeletes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, rt := withRuntime(b)
		a, x, y := ns("a"), cm("x", "1"), cm("y", "2")
		node := started(t, b, m, a, x, y)
		if _, err := m.Batch(ctx, []release.Node{node(a.ID), node(x.ID), node(y.ID)}, nil, nil); err != nil {
			t.Fatal(err)
		}
		key := node(a.ID).Key
		if _, err := m.Finish(ctx, release.FinishInput{Key: key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		info, err := m.Begin(ctx, release.BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationDestroy, WorkflowID: "kumo/p/w", RunID: "run-2"})
		if err != nil {
			t.Fatal(err)
		}
		del := func(id string) release.Node {
			return release.Node{Key: info.Key, PriorRevision: info.PriorRevision, ID: id, Delete: true}
		}
		if _, err := m.Batch(ctx, []release.Node{del(x.ID), del(y.ID)}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if rt.has(x.ID) || rt.has(y.ID) || !rt.has(a.ID) {
			t.Fatalf("live after deleting x and y: %v", rt.IDs())
		}
		if n, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil || n != 1 {
			t.Fatalf("Finish = %d, %v; want the namespace only", n, err)
		}
	})
}

// checkRecorded fails unless the release's entries are exactly rs, as applied.
func checkRecorded(t *testing.T, b backend.Backend, key backend.ReleaseKey, rs ...engine.Resource) {
	t.Helper()
	entries, err := b.ListStateEntries(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(rs) {
		t.Fatalf("%d entries recorded, want %d", len(entries), len(rs))
	}
	for _, r := range rs {
		e, ok := entries[r.ID]
		if !ok || e.Resource == nil || e.Resource.Attributes["data"].(map[string]any)["v"] != r.Attributes["data"].(map[string]any)["v"] {
			t.Errorf("entry of %s: %+v", r.ID, e)
		}
	}
}
