package backendtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

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
	r, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	r.Phase = engine.PhaseFailed
	for name, call := range everyCall(cctx, b, key, r) {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v, want context.Canceled", name, err)
		}
	}
	// Nothing was written.
	for what, err := range map[string]error{
		"revision 2":    notFound(b.GetRelease(ctx, "p", "w", 2)),
		"workspace dev": notFound(b.GetWorkspace(ctx, "dev")),
		"run log":       notFound(b.RunLog(ctx, "run-7")),
		"empty spec":    notFound(b.GetSpec(ctx, engine.HashSpec(&engine.Spec{}))),
	} {
		if err != nil {
			t.Errorf("%s after canceled calls: %v", what, err)
		}
	}
	if es, err := b.ListAudit(ctx, backend.AuditFilter{}); err != nil || len(es) != 0 {
		t.Errorf("audit entries after a canceled append: %v, %v", es, err)
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

// everyCall calls each Backend method once with ctx, on release key (which r, a
// copy of it read before, updates) and on the workspace "dev", the run "run-7" and
// the empty spec; the calls that write would create revision key.Revision+1,
// workspaces dev and prod, a run log and a state entry.
func everyCall(ctx context.Context, b backend.Backend, key backend.ReleaseKey, r *engine.Release) map[string]func() error {
	return map[string]func() error{
		"PutSpec":           func() error { _, err := b.PutSpec(ctx, &engine.Spec{}); return err },
		"GetSpec":           func() error { _, err := b.GetSpec(ctx, engine.HashSpec(&engine.Spec{})); return err },
		"CreateRelease":     func() error { return b.CreateRelease(ctx, Release(key.Project, key.Workspace, key.Revision+1)) },
		"UpdateRelease":     func() error { return b.UpdateRelease(ctx, r) },
		"GetRelease":        func() error { _, err := b.GetRelease(ctx, key.Project, key.Workspace, key.Revision); return err },
		"LatestRelease":     func() error { _, err := b.LatestRelease(ctx, key.Project, key.Workspace); return err },
		"LatestReleaseHead": func() error { _, err := b.LatestReleaseHead(ctx, key.Project, key.Workspace); return err },
		"ListReleases":      func() error { _, err := b.ListReleases(ctx, key.Project, key.Workspace); return err },
		"PutStateEntry":     func() error { return b.PutStateEntry(ctx, key, backend.StateEntry{ID: "v1:Namespace:x"}) },
		"GetStateEntry":     func() error { _, _, err := b.GetStateEntry(ctx, key, "v1:Namespace:x"); return err },
		"ListStateEntries":  func() error { _, err := b.ListStateEntries(ctx, key); return err },
		"ClearStateEntries": func() error { return b.ClearStateEntries(ctx, key) },
		"ListProjects":      func() error { _, err := b.ListProjects(ctx, key.Workspace); return err },
		"CreateWorkspace":   func() error { return b.CreateWorkspace(ctx, Workspace("dev")) },
		"PutWorkspace":      func() error { return b.PutWorkspace(ctx, Workspace("prod")) },
		"GetWorkspace":      func() error { _, err := b.GetWorkspace(ctx, "dev"); return err },
		"ListWorkspaces":    func() error { _, err := b.ListWorkspaces(ctx); return err },
		"DeleteWorkspace":   func() error { return b.DeleteWorkspace(ctx, "dev") },
		"PutRunLog":         func() error { return b.PutRunLog(ctx, "run-7", "000003", []byte("x")) },
		"RunLog":            func() error { _, err := b.RunLog(ctx, "run-7"); return err },
		"AppendAudit": func() error {
			return b.AppendAudit(ctx, backend.AuditEntry{Time: time.Unix(1, 0), Subject: "s", Action: "a", Result: backend.AuditAllowed})
		},
		"ListAudit": func() error { _, err := b.ListAudit(ctx, backend.AuditFilter{}); return err },
	}
}
