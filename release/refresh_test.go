package release_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/release"
)

// TestRefreshRecordsWhatDiffersFromThePriorRecord: Refresh reads the nodes
// again and records those whose live object differs from what the prior
// release recorded, as Preview's refresh did: a label added out of band, a
// dependsOn-only change (references included), a dropped resource that is
// gone; a resource live as recorded gets no entry. It applies nothing, reads
// the Kubernetes resources without references together, gives the same
// entries through a runtime that cannot read that way, and called twice
// records the same.
func TestRefreshRecordsWhatDiffersFromThePriorRecord(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		mem := memory.New()
		listing := &listingRuntime{Runtime: mem}
		m := release.New(b, listing, &runs{})
		same, labelled, deps, gone := cm("same", "1"), cm("labelled", "1"), cm("deps", "1"), cm("gone", "1")
		ref := cm("ref", "1")
		ref.Attributes["data"] = map[string]any{"v": "$kumo_path.v1:ConfigMap:a:same.metadata.name"}
		first := started(t, b, m, same, labelled, deps, gone, ref)
		for _, r := range []engine.Resource{same, labelled, deps, gone, ref} {
			if _, err := m.Apply(ctx, first(r.ID)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: first(same.ID).Key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		// Out of band: a label on labelled and on ref, gone deleted.
		for _, id := range []string{labelled.ID, ref.ID} {
			live, err := mem.Read(ctx, &engine.Resource{ID: id})
			if err != nil {
				t.Fatal(err)
			}
			live.Attributes["metadata"].(map[string]any)["labels"] = map[string]any{"team": "x"}
			if _, err := mem.Apply(ctx, live, runtime.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := mem.Delete(ctx, &gone); err != nil {
			t.Fatal(err)
		}
		deps2 := deps
		deps2.DependsOn = append([]string{same.ID}, deps.DependsOn...)
		ref2 := ref
		ref2.DependsOn = nil // recorded with its reference's: the same as before
		info, err := m.Begin(ctx, begin("p", "w", "run-2", putSpec(t, b, same, labelled, deps2, ref2)))
		if err != nil {
			t.Fatal(err)
		}
		node := nodes(info)
		var batch []release.Node
		for _, id := range []string{same.ID, labelled.ID, deps.ID, gone.ID, ref.ID} {
			n := node(id)
			n.Delete = id == gone.ID
			batch = append(batch, n)
		}
		applied := len(mem.Applied())
		listing.listed.Store(0)
		var first2 map[string]backend.StateEntry
		for attempt := range 2 {
			n, err := m.Refresh(ctx, batch, "run-2/refresh")
			if err != nil || n != 4 {
				t.Fatalf("Refresh (attempt %d) = %d, %v; want 4 recorded", attempt+1, n, err)
			}
			entries, err := b.ListStateEntries(ctx, info.Key)
			if err != nil {
				t.Fatal(err)
			}
			if attempt == 0 {
				first2 = entries
				continue
			}
			if !reflect.DeepEqual(entries, first2) {
				t.Fatalf("second Refresh recorded %+v, the first %+v", entries, first2)
			}
		}
		if got := len(mem.Applied()); got != applied {
			t.Errorf("Refresh applied %v", mem.Applied()[applied:])
		}
		if got := listing.listed.Load(); got != 2*4 {
			t.Errorf("%d resources read together over two calls, want 8 (same, labelled, deps, gone each time)", got)
		}
		if _, ok := first2[same.ID]; ok {
			t.Errorf("same is live as recorded, yet recorded: %+v", first2[same.ID])
		}
		for _, id := range []string{labelled.ID, ref.ID} {
			e := first2[id]
			if e.Resource == nil || !reflect.DeepEqual(e.Resource.Attributes["metadata"].(map[string]any)["labels"], map[string]any{"team": "x"}) {
				t.Errorf("%s: recorded %+v, want its live labels", id, e.Resource)
			}
		}
		if e := first2[ref.ID]; e.Resource == nil || !reflect.DeepEqual(e.Resource.DependsOn, []string{same.ID}) {
			t.Errorf("ref: recorded %+v, want dependsOn its reference", e.Resource)
		}
		if e := first2[deps.ID]; e.Resource == nil || !reflect.DeepEqual(e.Resource.DependsOn, deps2.DependsOn) {
			t.Errorf("deps: recorded %+v, want its new dependsOn", e.Resource)
		}
		if e := first2[gone.ID]; !e.Deleted {
			t.Errorf("gone: recorded %+v, want deleted", e)
		}

		// A runtime that cannot read together: each read alone, the same entries.
		if err := b.ClearStateEntries(ctx, info.Key); err != nil {
			t.Fatal(err)
		}
		if n, err := release.New(b, &fakeRuntime{mem}, &runs{}).Refresh(ctx, batch, "run-2/refresh"); err != nil || n != 4 {
			t.Fatalf("Refresh without a LiveReader = %d, %v", n, err)
		}
		if alone, err := b.ListStateEntries(ctx, info.Key); err != nil || !reflect.DeepEqual(alone, first2) {
			t.Errorf("read alone: recorded %+v (%v), read together %+v", alone, err, first2)
		}
	})
}

// TestRefreshNeedsARelease: a preview with no release has nothing to refresh.
func TestRefreshNeedsARelease(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, _ := withRuntime(b)
		x := cm("x", "1")
		n := release.Node{SpecHash: putSpec(t, b, x), ID: x.ID}
		if _, err := m.Refresh(ctx, []release.Node{n}, ""); !errors.Is(err, release.ErrInvalid) {
			t.Fatalf("Refresh with no release: %v, want ErrInvalid", err)
		}
	})
}
