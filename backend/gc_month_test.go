package backend_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
)

// usage is the bytes and objects under each top-level directory of a local
// backend.
type usage map[string][2]int64

func measure(t *testing.T, root string) usage {
	t.Helper()
	u := usage{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := u[top]
		v[0] += fi.Size()
		v[1]++
		u[top] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// perRun is what accumulates per run, everything but the releases (which
// are kept by design) and the specs they name.
func (u usage) perRun() (bytes, objects int64) {
	for _, k := range []string{"runs", "drift", "requests", "gc"} {
		bytes += u[k][0]
		objects += u[k][1]
	}
	return bytes, objects
}

// TestMonthOfLoadEndsBounded: a month of a platform's load on one backend,
// compressed in time (the collection's clock is simulated; the records are
// real, on a local backend): 6 stacks of 20 resources, an apply an hour
// (one in ten losing a revision race first), two previews an hour, a drift
// check of every stack every 2 hours, an idempotent API request an hour, and a
// collection every 6 hours with run logs and drift reports kept a day. What
// runs leave behind reaches a plateau after the first day; only the
// releases grow, by their own revisions.
func TestMonthOfLoadEndsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a month of simulated load: 720 applies, 2,160 drift reports")
	}
	root := t.TempDir()
	daily, removed := monthOfLoad(t, root, monthPolicy)
	t.Logf("day | releases/ bytes (objects) | specs/ bytes (objects) | runs+drift+requests+gc bytes (objects)")
	for d, u := range daily {
		if d < 3 || d%5 == 4 || d == len(daily)-1 {
			b, o := u.perRun()
			t.Logf("%3d | %9d (%5d) | %8d (%4d) | %8d (%4d)", d+1, u["releases"][0], u["releases"][1], u["specs"][0], u["specs"][1], b, o)
		}
	}
	t.Logf("%d records removed over %d days; %d revisions kept", removed, monthDays, 24*monthDays)
	// Bounded: from day 3 on, what runs leave behind stays within 10 % of
	// day 3's; unreferenced specs are only the last hours' previews.
	b3, o3 := daily[2].perRun()
	for d := 3; d < len(daily); d++ {
		b, o := daily[d].perRun()
		if float64(b) > 1.1*float64(b3) || float64(o) > 1.1*float64(o3) {
			t.Errorf("day %d: per-run records %d bytes in %d objects, day 3: %d in %d: not a plateau", d+1, b, o, b3, o3)
		}
	}
	last := daily[len(daily)-1]
	if specs, applies := last["specs"][1], int64(24*monthDays); specs > applies+2*7 {
		t.Errorf("%d specs stored after %d applies: the previews' and lost creates' are not collected", specs, applies)
	}
	// Releases grow by their revisions only: the lost creates' chunks went.
	if chunks := countChunks(t, root); chunks > 24*monthDays+monthStacks {
		t.Errorf("%d state chunks for %d revisions: the lost creates' chunks stay", chunks, 24*monthDays)
	}
}

// TestMonthOfLoadWithAHistoryLimitEndsBounded: the same month with the
// release history limit set (kumo server --retain-releases 10): the releases
// and the specs they name stop growing too, so the whole backend reaches a
// plateau once every stack has ten revisions.
func TestMonthOfLoadWithAHistoryLimitEndsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a month of simulated load: 720 applies, 2,160 drift reports")
	}
	const keep = 10
	p := monthPolicy
	p.Releases = keep
	root := t.TempDir()
	daily, _ := monthOfLoad(t, root, p)
	total := func(u usage) (bytes, objects int64) {
		for _, v := range u {
			bytes += v[0]
			objects += v[1]
		}
		return bytes, objects
	}
	// Each stack has its ten revisions by day 3 (4 applies a stack a day).
	b5, o5 := total(daily[4])
	for d := 5; d < len(daily); d++ {
		if b, o := total(daily[d]); float64(b) > 1.1*float64(b5) || float64(o) > 1.1*float64(o5) {
			t.Errorf("day %d: the backend holds %d bytes in %d objects, day 5: %d in %d: not a plateau", d+1, b, o, b5, o5)
		}
	}
	b30, o30 := total(daily[len(daily)-1])
	t.Logf("whole backend: day 5 %d bytes in %d objects, day %d %d bytes in %d objects", b5, o5, len(daily), b30, o30)
	releases, err := filepath.Glob(filepath.Join(root, "releases", "shop", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// A collection every 6 hours: at most a collection's worth of applies
	// (one per stack) beyond the limit.
	if want := monthStacks * (keep + 1); len(releases) > want {
		t.Errorf("%d release files after a month, want at most %d (%d stacks, %d kept, one apply since the last collection)", len(releases), want, monthStacks, keep)
	}
}

// monthPolicy keeps run logs and drift reports a day.
var monthPolicy = backend.GCPolicy{RunLogs: 24 * time.Hour, DriftReports: 24 * time.Hour, Requests: time.Hour, Grace: backend.MinGCGrace}

const monthStacks, monthDays = 6, 30

// monthOfLoad runs the month (TestMonthOfLoadEndsBounded) on a local backend
// at root, collecting under policy, and returns the backend's usage at the
// end of each day and how many records the collections removed.
func monthOfLoad(t *testing.T, root string, policy backend.GCPolicy) (daily []usage, removed int) {
	t.Helper()
	ctx := context.Background()
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	s := b.RecordStore()
	const stacks, resources, days = monthStacks, 20, monthDays
	state := make([][]engine.Resource, stacks)
	for i := range state {
		for r := range resources {
			state[i] = append(state[i], backendtest.Resource(fmt.Sprintf("v1:ConfigMap:s%d:cm-%02d", i, r), 0))
		}
	}
	revision := make([]int, stacks)
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	apply := func(now time.Time, h int) {
		i := h % stacks
		ws := fmt.Sprintf("w%d", i)
		// Two resources change per apply.
		for _, r := range []int{h % resources, (h + 7) % resources} {
			state[i][r] = backendtest.Resource(state[i][r].ID, int64(h))
		}
		spec := &engine.Spec{Resources: append([]engine.Resource(nil), state[i]...)}
		runID := fmt.Sprintf("run-%06d", h)
		rel := backendtest.Release("shop", ws, revision[i]+1)
		rel.Spec, rel.SpecHash, rel.RunID, rel.CreateTime = spec, engine.HashSpec(spec), runID, now
		if h%10 == 3 && revision[i] > 0 {
			// Another run took this revision: this create loses, its
			// spec and chunks stay unreferenced.
			lost := *rel
			lost.Revision = revision[i]
			lost.State = &engine.State{Resources: spec.Resources}
			if err := s.CreateRelease(ctx, &lost); err == nil {
				t.Fatal("a create of a taken revision succeeded")
			}
		}
		if err := s.PutRunLog(ctx, runID, "generate", []byte(strings.Repeat("generated a resource\n", resources))); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateRelease(ctx, rel); err != nil {
			t.Fatal(err)
		}
		revision[i]++
		entries := make([]backend.StateEntry, len(spec.Resources))
		for k := range spec.Resources {
			entries[k] = backend.StateEntry{ID: spec.Resources[k].ID, Resource: &spec.Resources[k]}
		}
		if err := s.PutStateEntries(ctx, backend.KeyOf(rel), entries); err != nil {
			t.Fatal(err)
		}
		rel.State, rel.Phase = &engine.State{Resources: spec.Resources}, engine.PhaseSucceeded
		if err := s.UpdateRelease(ctx, rel); err != nil {
			t.Fatal(err)
		}
		if err := s.ClearStateEntries(ctx, backend.KeyOf(rel)); err != nil {
			t.Fatal(err)
		}
		if err := s.PutRunLog(ctx, runID, "release", []byte("release succeeded\n")); err != nil {
			t.Fatal(err)
		}
	}
	for h := 0; h < days*24; h++ {
		now := start.Add(time.Duration(h) * time.Hour)
		apply(now, h)
		for p := range 2 {
			preview := &engine.Spec{Resources: []engine.Resource{backendtest.Resource(fmt.Sprintf("v1:ConfigMap:preview:p-%d-%d", h, p), int64(h))}}
			if _, err := s.PutSpec(ctx, preview); err != nil {
				t.Fatal(err)
			}
		}
		for i := range stacks {
			if (h+i)%2 != 0 {
				continue // each stack is checked every 2 hours
			}
			r := &drift.Report{Project: "shop", Workspace: fmt.Sprintf("w%d", i), Stack: "base", CheckTime: now.Add(time.Duration(i) * time.Second), RunID: fmt.Sprintf("drift-%06d-%d", h, i), Revision: revision[i]}
			r.Add(drift.Result{ID: state[i][0].ID, Type: "Kubernetes", Status: drift.InSync})
			if err := s.PutDriftReport(ctx, r, 0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.ClaimRequest(ctx, backend.RequestRecord{Key: fmt.Sprintf("req-%06d", h), Fingerprint: "f", Created: now}); err != nil {
			t.Fatal(err)
		}
		if h%6 == 5 {
			rep, err := backend.Collect(ctx, s, policy, now, false)
			if err != nil {
				t.Fatal(err)
			}
			removed += rep.Total()
		}
		if h%24 == 23 {
			b.Wait() // the space of what was removed, freed (local/trash.go)
			daily = append(daily, measure(t, root))
		}
	}
	return daily, removed
}

func countChunks(t *testing.T, root string) int {
	t.Helper()
	n := 0
	matches, err := filepath.Glob(filepath.Join(root, "releases", "shop", "*", "chunks", "*"))
	if err != nil {
		t.Fatal(err)
	}
	n += len(matches)
	return n
}
