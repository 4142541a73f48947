package backendtest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

func testPreviews(t *testing.T, b backend.Backend) {
	key := backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 1}
	p := backend.RecordedPreview{
		Changes: []engine.Change{
			{ID: "v1:Namespace:demo", Type: engine.Kubernetes, Action: engine.Create},
			{ID: "v1:ConfigMap:demo:a", Type: engine.Kubernetes, Action: engine.Update,
				Fields: []engine.FieldChange{{Path: "data.k", Before: "old", After: "new"}}},
			{ID: "v1:ConfigMap:demo:b", Type: engine.Kubernetes, Action: engine.UnChanged},
		},
		Stale: []int{2},
	}
	if err := b.PutPreview(ctx, key, p); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("PutPreview before the release exists: %v, want ErrNotFound", err)
	}
	mustCreate(t, b, Release("p", "w", 1))
	if _, ok, err := b.GetPreview(ctx, key); ok || err != nil {
		t.Fatalf("GetPreview with none kept: ok=%v err=%v", ok, err)
	}
	if err := b.PutPreview(ctx, key, p); err != nil {
		t.Fatalf("PutPreview: %v", err)
	}
	got, ok, err := b.GetPreview(ctx, key)
	if err != nil || !ok || !reflect.DeepEqual(got, p) {
		t.Fatalf("GetPreview = %+v, %v, %v; want %+v", got, ok, err, p)
	}
	// A preview is no state entry: the release's entries stay as they were.
	if entries, err := b.ListStateEntries(ctx, key); err != nil || len(entries) != 0 {
		t.Fatalf("ListStateEntries beside a preview: %v, %v; want none", entries, err)
	}
	// Put again (a retried step): replaced.
	p.Changes[0].Action, p.Stale = engine.UnChanged, nil
	if err := b.PutPreview(ctx, key, p); err != nil {
		t.Fatal(err)
	}
	if got, _, err := b.GetPreview(ctx, key); err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("GetPreview after a second put = %+v, %v; want %+v", got, err, p)
	}
	// Another revision's is its own.
	mustCreate(t, b, Release("p", "w", 2))
	if _, ok, err := b.GetPreview(ctx, backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 2}); ok || err != nil {
		t.Fatalf("GetPreview of another revision: ok=%v err=%v", ok, err)
	}
	// Cleared with the entries once the release is finished.
	if err := b.PutStateEntry(ctx, key, backend.StateEntry{ID: "v1:Namespace:demo", Deleted: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.ClearStateEntries(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.GetPreview(ctx, key); ok || err != nil {
		t.Fatalf("GetPreview after ClearStateEntries: ok=%v err=%v", ok, err)
	}
}
