package release_test

import (
	"errors"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

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
