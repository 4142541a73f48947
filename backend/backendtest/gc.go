package backendtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// testCollect: backend.Collect on this driver removes what the policy says is
// garbage and nothing else: every release reads back whole (its spec and
// state chunks stay), an unreferenced spec and the chunks of a create that
// lost its revision race go only after two passes a grace apart, run logs
// after their retention, drift reports past theirs but each stack's newest,
// idempotency records past their window, audit days only with an audit
// retention; a dry run removes and writes nothing.
func testCollect(t *testing.T, d *recorder, b backend.Backend) {
	s, ok := b.(*backend.Store)
	if !ok {
		t.Skip("not a backend.Store")
	}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	policy := backend.DefaultGCPolicy()

	// Two revisions that share a spec; the second's state reuses chunks.
	spec := &engine.Spec{Resources: stateOf(3, 0)}
	var kept []*engine.Release
	for rev := 1; rev <= 2; rev++ {
		r := Release("shop", "dev", rev)
		r.Spec, r.SpecHash = spec, engine.HashSpec(spec)
		r.State = &engine.State{Resources: stateOf(3, int64(rev))}
		r.Phase = engine.PhaseSucceeded
		mustCreate(t, b, r)
		kept = append(kept, r)
	}
	// A create of revision 2 that lost the race leaves its spec and chunks.
	lost := Release("shop", "dev", 2)
	lostSpec := &engine.Spec{Resources: stateOf(2, 99)}
	lost.Spec, lost.SpecHash = lostSpec, engine.HashSpec(lostSpec)
	lost.State = &engine.State{Resources: stateOf(4, 77)}
	if err := b.CreateRelease(ctx, lost); !errors.Is(err, backend.ErrRevisionExists) {
		t.Fatalf("losing create: %v, want ErrRevisionExists", err)
	}
	// A preview's spec: never named by a release.
	previewSpec := &engine.Spec{Resources: stateOf(1, 55)}
	previewHash, err := b.PutSpec(ctx, previewSpec)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.PutRunLog(ctx, "run-old", "generate", []byte("generated\n")); err != nil {
		t.Fatal(err)
	}
	for i, age := range []time.Duration{40 * 24 * time.Hour, 35 * 24 * time.Hour, 31 * 24 * time.Hour} {
		r := driftReport("shop", "dev", i)
		r.CheckTime = t0.Add(-age)
		if err := b.PutDriftReport(ctx, r, 0); err != nil {
			t.Fatal(err)
		}
	}
	fresh := driftReport("shop", "prod", 9)
	fresh.CheckTime = t0.Add(-time.Hour)
	if err := b.PutDriftReport(ctx, fresh, 0); err != nil {
		t.Fatal(err)
	}
	for name, created := range map[string]time.Time{"req-old": t0.Add(-48 * time.Hour), "req-new": t0.Add(-time.Hour)} {
		if _, err := b.ClaimRequest(ctx, backend.RequestRecord{Key: name, Fingerprint: "f", Created: created}); err != nil {
			t.Fatal(err)
		}
	}
	for i, at := range []time.Time{t0.Add(-10 * 24 * time.Hour), t0} {
		if err := b.AppendAudit(ctx, backend.AuditEntry{ID: fmt.Sprintf("a%d", i), Time: at, Subject: "alice", Action: "start apply", Result: backend.AuditAllowed}); err != nil {
			t.Fatal(err)
		}
	}
	keys := func() []string {
		t.Helper()
		var out []string
		var walk func(dir string)
		walk = func(dir string) {
			ents, err := d.List(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.Dir {
					walk(dir + "/" + e.Name)
				} else {
					out = append(out, dir+"/"+e.Name)
				}
			}
		}
		for _, root := range backend.RecordRoots {
			walk(root)
		}
		slices.Sort(out)
		return out
	}
	collect := collector(t, ctx, s)
	requireKept := func(when string) {
		t.Helper()
		for _, want := range kept {
			got, err := b.GetRelease(ctx, "shop", "dev", want.Revision)
			if err != nil {
				t.Fatalf("%s: release %d: %v", when, want.Revision, err)
			}
			requireSameRelease(t, fmt.Sprintf("%s: revision %d", when, want.Revision), got, want)
		}
	}
	chunks := chunkCounter(t, ctx, d, "shop", "dev")
	allChunks := chunks()

	before := keys()
	dry := collect(t0, policy, true)
	if got := keys(); !slices.Equal(got, before) {
		t.Fatalf("a dry run changed the backend:\nbefore %v\nafter  %v", before, got)
	}
	if dry.DriftReports != 2 || dry.Requests != 1 || dry.Specs != 0 || dry.Chunks != 0 || dry.RunLogs != 0 {
		t.Errorf("dry run at t0: %+v, want 2 drift reports and 1 request, no spec, chunk or run log yet", dry)
	}

	first := collect(t0, policy, false)
	if first.DriftReports != 2 || first.Requests != 1 || first.Total() != 3 {
		t.Errorf("first pass: %+v, want the 2 expired drift reports (not the newest) and the expired request", first)
	}
	if first.Waiting < 3 {
		t.Errorf("first pass: %d candidates waiting, want at least the 2 unreferenced specs and the run log", first.Waiting)
	}
	if reps, err := b.DriftReports(ctx, "shop", "dev"); err != nil || len(reps) != 1 {
		t.Errorf("drift reports of shop/dev after the first pass: %d, %v; want the newest only", len(reps), err)
	}
	if _, err := b.GetRequest(ctx, "req-old"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("expired request: %v, want ErrNotFound", err)
	}
	if _, err := b.GetRequest(ctx, "req-new"); err != nil {
		t.Errorf("request in its window: %v", err)
	}
	requireKept("after the first pass")

	// Within the grace nothing unreferenced goes.
	if rep := collect(t0.Add(policy.Grace/2), policy, false); rep.Specs+rep.Chunks != 0 {
		t.Errorf("within the grace: removed %v", rep.Removed)
	}
	// A spec a queued run names is kept though no release names it.
	keep, err := backend.Collect(ctx, s, policy, t0.Add(policy.Grace+time.Minute), true, previewHash)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(keep.Removed, "specs/"+previewHash+".yaml") || !slices.Contains(keep.Removed, "specs/"+engine.HashSpec(lostSpec)+".yaml") {
		t.Errorf("after the grace, keeping the preview's spec: would remove %v", keep.Removed)
	}
	if _, err := backend.Collect(ctx, s, policy, t0, true, "../specs/x"); err == nil || !strings.Contains(err.Error(), "not a spec hash") {
		t.Errorf("a spec to keep that is no hash: %v", err)
	}
	second := collect(t0.Add(policy.Grace+time.Minute), policy, false)
	wantSpecs := []string{"specs/" + engine.HashSpec(lostSpec) + ".yaml", "specs/" + previewHash + ".yaml"}
	slices.Sort(wantSpecs)
	var gotSpecs []string
	for _, k := range second.Removed {
		if strings.HasPrefix(k, "specs/") {
			gotSpecs = append(gotSpecs, k)
		}
	}
	if !slices.Equal(gotSpecs, wantSpecs) {
		t.Errorf("after the grace, removed specs %v, want %v", gotSpecs, wantSpecs)
	}
	if second.Chunks == 0 || chunks() != allChunks-second.Chunks {
		t.Errorf("after the grace: removed %d chunks, %d of %d left", second.Chunks, chunks(), allChunks)
	}
	if second.RunLogs != 0 {
		t.Errorf("run log removed within its retention")
	}
	if second.Bytes <= 0 {
		t.Errorf("removed bytes: %d", second.Bytes)
	}
	requireKept("after the grace")
	// A removed object stays readable from the collection's trash for a
	// grace (a release written as it went may name it), then goes.
	if _, err := b.GetSpec(ctx, previewHash); err != nil {
		t.Errorf("preview spec just removed: %v, want it read from the trash", err)
	}
	if again := collect(t0.Add(2*policy.Grace), policy, false); again.Specs+again.Chunks != 0 {
		t.Errorf("a pass after the sweep removed %v: only garbage goes, once", again.Removed)
	}
	if _, err := b.GetSpec(ctx, previewHash); err != nil {
		t.Errorf("preview spec removed less than a grace ago: %v, want it read from the trash", err)
	}
	if emptied := collect(t0.Add(2*policy.Grace+time.Minute), policy, false); emptied.Total() != 0 || len(emptied.Restored) != 0 {
		t.Errorf("the pass that empties the trash removed %v, restored %v", emptied.Removed, emptied.Restored)
	}
	if _, err := b.GetSpec(ctx, previewHash); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("preview spec a grace after it was removed: %v, want ErrNotFound", err)
	}
	if trash, err := d.List(ctx, "gc/trash/specs"); err != nil || len(trash) != 0 {
		t.Errorf("the trash a grace after the sweep holds %v (%v), want nothing", trash, err)
	}

	late := t0.Add(policy.RunLogs + time.Hour)
	third := collect(late, policy, false)
	if third.RunLogs != 1 {
		t.Errorf("after the run log retention: %+v, want the run log removed", third)
	}
	if _, err := b.RunLog(ctx, "run-old"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("run log after its retention: %v, want ErrNotFound", err)
	}
	if entries, err := b.ListAudit(ctx, backend.AuditFilter{}); err != nil || len(entries) != 2 {
		t.Errorf("audit without an audit retention: %d entries, %v; want both kept", len(entries), err)
	}
	withAudit := policy
	withAudit.Audit = 7 * 24 * time.Hour
	if rep := collect(t0, withAudit, false); rep.AuditDays != 1 {
		t.Errorf("audit retention 7d: %+v, want the day 10 days old removed", rep)
	}
	if entries, err := b.ListAudit(ctx, backend.AuditFilter{}); err != nil || len(entries) != 1 || !entries[0].Time.Equal(t0) {
		t.Errorf("audit after its retention: %v, %v; want the entry of t0 only", entries, err)
	}
	requireKept("at the end")
	if _, err := b.DriftReport(ctx, "shop", "dev", ""); err != nil {
		t.Errorf("the newest drift report of a stack is kept: %v", err)
	}
	bad := policy
	bad.Grace = time.Second
	if _, err := backend.Collect(ctx, s, bad, t0, false); err == nil || !strings.Contains(err.Error(), "gc grace") {
		t.Errorf("a grace of 1s: %v, want an error naming the gc grace", err)
	}
}

// collector returns Collect on s at a time, under a policy, failing the test
// on an error.
func collector(t *testing.T, ctx context.Context, s *backend.Store) func(at time.Time, p backend.GCPolicy, dry bool) backend.GCReport {
	return func(at time.Time, p backend.GCPolicy, dry bool) backend.GCReport {
		t.Helper()
		rep, err := backend.Collect(ctx, s, p, at, dry)
		if err != nil {
			t.Fatalf("Collect at %s: %v", at, err)
		}
		return rep
	}
}

// chunkCounter returns how many state chunks the driver holds for
// project/workspace, failing the test on an error.
func chunkCounter(t *testing.T, ctx context.Context, d backend.Driver, project, workspace string) func() int {
	return func() int {
		t.Helper()
		ents, err := d.List(ctx, "releases/"+project+"/"+workspace+"/chunks")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
}
