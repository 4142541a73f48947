package drift

import (
	"testing"
	"time"
)

func TestReportCountsAndSummary(t *testing.T) {
	r := Report{Project: "shop", Workspace: "dev", Revision: 7}
	r.Add(Result{ID: "a", Status: InSync})
	r.Add(Result{ID: "b", Status: Drifted, Fields: []Field{{Path: "/x"}}})
	r.Add(Result{ID: "c", Status: Missing})
	r.Add(Result{ID: "d", Status: InSync, Ignored: []Field{{Path: "/y"}, {Path: "/z"}}})
	if got, want := r.Summary(), "drift shop/dev rev 7: 1 of 4 drifted, 1 missing, 2 ignored"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if len(r.Resources) != 3 || r.ExitCode() != 2 || !r.Drifted() {
		t.Errorf("listed %d, exit %d, drifted %v", len(r.Resources), r.ExitCode(), r.Drifted())
	}
	r.Add(Result{ID: "e", Status: Error, Error: "forbidden"})
	if r.ExitCode() != 1 {
		t.Errorf("exit %d with an error, want 1", r.ExitCode())
	}
	clean := Report{}
	clean.Add(Result{ID: "a", Status: InSync})
	if clean.ExitCode() != 0 || clean.Drifted() {
		t.Error("an in-sync report is drifted")
	}
}

func TestCarryOver(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	first := Report{CheckTime: t0}
	first.Add(Result{ID: "old", Status: Drifted})
	first.Add(Result{ID: "flip", Status: Drifted})
	first.CarryOver(nil)
	second := Report{CheckTime: t1}
	second.Add(Result{ID: "old", Status: Drifted})
	second.Add(Result{ID: "flip", Status: Missing})
	second.Add(Result{ID: "new", Status: Drifted})
	second.CarryOver(&first)
	second.Sort()
	want := map[string]struct {
		seen time.Time
		n    int
	}{"old": {t0, 2}, "flip": {t1, 1}, "new": {t1, 1}}
	for _, r := range second.Resources {
		if w := want[r.ID]; !r.FirstSeen.Equal(w.seen) || r.ConsecutiveChecks != w.n {
			t.Errorf("%s: first seen %v, %d checks; want %v, %d", r.ID, r.FirstSeen, r.ConsecutiveChecks, w.seen, w.n)
		}
	}
}
