package backend_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
)

var bctx = context.Background()

func newLocal(t *testing.T) *backend.Store {
	t.Helper()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return b.RecordStore()
}

// fill writes one of each kind of record: releases of two projects (one with
// its spec), a workspace, a run log, a drift report and an audit entry.
func fill(t *testing.T, s *backend.Store) {
	t.Helper()
	spec := &engine.Spec{Resources: []engine.Resource{backendtest.Resource("v1:Namespace:demo", 1)}}
	hash, err := s.PutSpec(bctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"shop", "blog"} {
		for rev := 1; rev <= 3; rev++ {
			r := backendtest.Release(p, "dev", rev)
			r.Phase, r.SpecHash = engine.PhaseSucceeded, hash
			if err := s.CreateRelease(bctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	// An update takes the local driver's lock file, which is no record.
	last, err := s.GetRelease(bctx, "blog", "dev", 3)
	if err != nil {
		t.Fatal(err)
	}
	last.Phase = engine.PhaseFailed
	if err := s.UpdateRelease(bctx, last); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWorkspace(bctx, backendtest.Workspace("dev")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRunLog(bctx, "run-2", "000001", []byte("applied\n")); err != nil {
		t.Fatal(err)
	}
	rep := &drift.Report{Project: "shop", Workspace: "dev", RunID: "drift-1", CheckTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := s.PutDriftReport(bctx, rep, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAudit(bctx, backend.AuditEntry{ID: "a1", Time: time.Now(), Subject: "alice", Action: "start apply", Project: "shop", Workspace: "dev", Result: backend.AuditAllowed}); err != nil {
		t.Fatal(err)
	}
}

func TestCopyEverything(t *testing.T) {
	from, to := newLocal(t), newLocal(t)
	fill(t, from)
	rep, err := backend.Copy(bctx, from, to, backend.CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 6 releases + 2 hints, their state chunks, the spec, a workspace, a
	// run log, a drift report, an audit entry.
	if rep.Records != 15 || rep.Present != 0 || rep.Bytes == 0 || !strings.HasPrefix(rep.Digest, "sha256:") {
		t.Fatalf("report %+v", rep)
	}
	for _, p := range []string{"shop", "blog"} {
		want, _ := from.ListReleases(bctx, p, "dev")
		got, err := to.ListReleases(bctx, p, "dev")
		if err != nil || len(got) != 3 {
			t.Fatalf("%s at the destination: %d releases, %v", p, len(got), err)
		}
		for i := range want {
			if d := backendtest.EqualReleases(got[i], want[i]); d != "" {
				t.Fatalf("%s#%d differs: %s", p, i+1, d)
			}
		}
	}
	if log, err := to.RunLog(bctx, "run-2"); err != nil || string(log) != "applied\n" {
		t.Fatalf("run log: %q, %v", log, err)
	}
	if r, err := to.DriftReport(bctx, "shop", "dev", ""); err != nil || r.RunID != "drift-1" {
		t.Fatalf("drift report: %v, %v", r, err)
	}
	if a, err := to.ListAudit(bctx, backend.AuditFilter{}); err != nil || len(a) != 1 || a[0].Subject != "alice" {
		t.Fatalf("audit: %v, %v", a, err)
	}
	// Again: nothing to write, the same digest.
	again, err := backend.Copy(bctx, from, to, backend.CopyOptions{})
	if err != nil || again.Present != rep.Records || again.Digest != rep.Digest {
		t.Fatalf("second copy: %+v, %v (first %+v)", again, err, rep)
	}
}

func TestCopyOneProject(t *testing.T) {
	from, to := newLocal(t), newLocal(t)
	fill(t, from)
	rep, err := backend.Copy(bctx, from, to, backend.CopyOptions{Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	// 3 releases + hint, their state chunks, the spec, the workspace,
	// run-2's log, the drift report.
	if rep.Records != 10 {
		t.Fatalf("report %+v", rep)
	}
	if got, _ := to.ListReleases(bctx, "blog", "dev"); len(got) != 0 {
		t.Fatalf("another project was copied: %d releases", len(got))
	}
	if got, _ := to.ListReleases(bctx, "shop", "dev"); len(got) != 3 {
		t.Fatalf("shop: %d releases", len(got))
	}
}

// TestCopyRefuses: a held stack, or a different record at the destination,
// stops the copy before it writes anything.
func TestCopyRefuses(t *testing.T) {
	from, to := newLocal(t), newLocal(t)
	fill(t, from)
	ws := backendtest.Workspace("dev")
	ws.Context = map[string]any{"team": "another"}
	if err := to.CreateWorkspace(bctx, ws); err != nil {
		t.Fatal(err)
	}
	_, err := backend.Copy(bctx, from, to, backend.CopyOptions{})
	if err == nil || !strings.Contains(err.Error(), "already holds a different record") || !strings.Contains(err.Error(), "workspaces/dev.yaml") {
		t.Fatalf("conflict: %v", err)
	}
	if got, _ := to.ListReleases(bctx, "shop", "dev"); len(got) != 0 {
		t.Fatalf("the refused copy wrote %d releases", len(got))
	}

	held := backendtest.Release("shop", "dev", 4)
	held.RunID = "run-held"
	if err := from.CreateRelease(bctx, held); err != nil {
		t.Fatal(err)
	}
	_, err = backend.Copy(bctx, from, newLocal(t), backend.CopyOptions{})
	if err == nil || !strings.Contains(err.Error(), "project shop workspace dev is held by run run-held (revision 4 is applying)") {
		t.Fatalf("held stack: %v", err)
	}
	if _, err := backend.Copy(bctx, from, newLocal(t), backend.CopyOptions{Project: "blog"}); err != nil {
		t.Fatalf("another project's copy is not held up: %v", err)
	}
	if _, err := backend.Copy(bctx, from, newLocal(t), backend.CopyOptions{Project: "../x"}); !errors.Is(err, backend.ErrInvalidName) {
		t.Fatalf("bad project: %v", err)
	}
}

// keyRecorder remembers every key written through it.
type keyRecorder struct {
	backend.Driver
	mu   *sync.Mutex
	keys map[string]bool
}

func (r keyRecorder) Write(ctx context.Context, key string, data []byte, cond backend.Condition) (string, error) {
	r.mu.Lock()
	r.keys[key] = true
	r.mu.Unlock()
	return r.Driver.Write(ctx, key, data, cond)
}

// TestRecordRootsCoverTheLayout: every key the conformance suite makes a Store
// write is under one of RecordRoots, so Copy misses no kind of record.
func TestRecordRootsCoverTheLayout(t *testing.T) {
	var mu sync.Mutex
	keys := map[string]bool{}
	t.Run("suite", func(t *testing.T) {
		backendtest.Run(t, func(t *testing.T) backend.Backend {
			d, err := local.NewDriver(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return backend.NewStore(keyRecorder{Driver: d, mu: &mu, keys: keys})
		})
	})
	roots := map[string]bool{}
	for k := range keys {
		root, _, _ := strings.Cut(k, "/")
		roots[root] = true
		if !slices.Contains(backend.RecordRoots, root) {
			t.Errorf("key %s is under no RecordRoots entry", k)
		}
	}
	got := slices.Sorted(func(yield func(string) bool) {
		for r := range roots {
			if !yield(r) {
				return
			}
		}
	})
	want := slices.Sorted(slices.Values(backend.RecordRoots))
	if !reflect.DeepEqual(got, want) {
		t.Logf("roots written by the suite: %v (RecordRoots: %v)", got, want)
	}
}
