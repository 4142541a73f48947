package backendtest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// testCanceledContext: every method returns ctx.Err() for a canceled context,
// and writes nothing.
func testCanceledContext(t *testing.T, b backend.Backend) {
	mustCreate(t, b, Release("p", "w", 1))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	key := backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 1}
	calls := map[string]func() error{
		"PutSpec":       func() error { _, err := b.PutSpec(cctx, &engine.Spec{}); return err },
		"GetSpec":       func() error { _, err := b.GetSpec(cctx, engine.HashSpec(&engine.Spec{})); return err },
		"CreateRelease": func() error { return b.CreateRelease(cctx, Release("p", "w", 2)) },
		"UpdateRelease": func() error {
			r, err := b.GetRelease(ctx, "p", "w", 1)
			if err != nil {
				return err
			}
			r.Phase = engine.PhaseFailed
			return b.UpdateRelease(cctx, r)
		},
		"GetRelease":        func() error { _, err := b.GetRelease(cctx, "p", "w", 1); return err },
		"LatestRelease":     func() error { _, err := b.LatestRelease(cctx, "p", "w"); return err },
		"ListReleases":      func() error { _, err := b.ListReleases(cctx, "p", "w"); return err },
		"PutStateEntry":     func() error { return b.PutStateEntry(cctx, key, backend.StateEntry{ID: "v1:Namespace:x"}) },
		"GetStateEntry":     func() error { _, _, err := b.GetStateEntry(cctx, key, "v1:Namespace:x"); return err },
		"ListStateEntries":  func() error { _, err := b.ListStateEntries(cctx, key); return err },
		"ClearStateEntries": func() error { return b.ClearStateEntries(cctx, key) },
		"ListProjects":      func() error { _, err := b.ListProjects(cctx, "w"); return err },
		"CreateWorkspace":   func() error { return b.CreateWorkspace(cctx, Workspace("dev")) },
		"PutWorkspace":      func() error { return b.PutWorkspace(cctx, Workspace("prod")) },
		"GetWorkspace":      func() error { _, err := b.GetWorkspace(cctx, "dev"); return err },
		"ListWorkspaces":    func() error { _, err := b.ListWorkspaces(cctx); return err },
		"DeleteWorkspace":   func() error { return b.DeleteWorkspace(cctx, "dev") },
		"PutRunLog":         func() error { return b.PutRunLog(cctx, "run", "part", []byte("x")) },
		"RunLog":            func() error { _, err := b.RunLog(cctx, "run"); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v, want context.Canceled", name, err)
		}
	}
	// Nothing was written.
	for what, err := range map[string]error{
		"revision 2":    notFound(b.GetRelease(ctx, "p", "w", 2)),
		"workspace dev": notFound(b.GetWorkspace(ctx, "dev")),
		"run log":       notFound(b.RunLog(ctx, "run")),
		"empty spec":    notFound(b.GetSpec(ctx, engine.HashSpec(&engine.Spec{}))),
	} {
		if err != nil {
			t.Errorf("%s after canceled calls: %v", what, err)
		}
	}
	if m, err := b.ListStateEntries(ctx, key); err != nil || len(m) != 0 {
		t.Errorf("state entries after a canceled put: %v, %v", m, err)
	}
	if r, err := b.GetRelease(ctx, "p", "w", 1); err != nil || r.Phase != engine.PhaseApplying {
		t.Errorf("revision 1 after a canceled update: %v, %v", r, err)
	}
}

// notFound turns a read's result into nil when it found nothing.
func notFound[T any](_ T, err error) error {
	if errors.Is(err, backend.ErrNotFound) {
		return nil
	}
	return fmt.Errorf("want ErrNotFound, got %v", err)
}
