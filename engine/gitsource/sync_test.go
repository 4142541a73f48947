package gitsource_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine/gitsource"
)

func TestSyncDecide(t *testing.T) {
	a, b, c := "aaaa", "bbbb", "cccc"
	var st gitsource.SyncState
	if d := st.Decide(a); !d.Start || d.Commit != a {
		t.Fatalf("first commit: %+v", d)
	}
	st.Started(st.Decide(a), "kumo/p/w", "r1", time.Now())
	if d := st.Decide(a); d.Start {
		t.Fatalf("unchanged commit starts a run: %+v", d)
	}
	// b and then c are seen while the stack is busy; c is deployed.
	st.Busy(b)
	st.Busy(b)
	d := st.Decide(c)
	if !d.Start || !slices.Equal(d.Skipped, []string{b}) {
		t.Fatalf("after busy b, c: %+v", d)
	}
	st.Busy(c)
	d = st.Decide(c)
	if !slices.Equal(d.Skipped, []string{b}) {
		t.Fatalf("the deployed commit is not skipped: %+v", d)
	}
	st.Started(d, "kumo/p/w", "r2", time.Now())
	if st.Commit != c || len(st.Pending) != 0 || !slices.Equal(st.Skipped, []string{b}) {
		t.Fatalf("state after c: %+v", st)
	}
	// A force-push back to a is a new deploy.
	if d := st.Decide(a); !d.Start || d.Commit != a {
		t.Fatalf("force-push back: %+v", d)
	}
}

func TestSameRepository(t *testing.T) {
	same := [][2]string{
		{"https://github.com/o/r.git", "https://GitHub.com/o/r"},
		{"git@github.com:o/r.git", "https://github.com/o/r"},
		{"ssh://git@github.com:22/o/r.git", "https://github.com/o/r/"},
	}
	for _, p := range same {
		if !gitsource.SameRepository(p[0], p[1]) {
			t.Errorf("%s and %s differ", p[0], p[1])
		}
	}
	differ := [][2]string{
		{"https://github.com/o/r", "https://github.com/o/r2"},
		{"https://github.com/o/r", "https://gitlab.com/o/r"},
		{"", ""},
		{"https://github.com/", "https://github.com/"},
	}
	for _, p := range differ {
		if gitsource.SameRepository(p[0], p[1]) {
			t.Errorf("%q and %q are the same", p[0], p[1])
		}
	}
}
