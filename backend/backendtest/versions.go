package backendtest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// testVersions: every read and write sets Version; an update needs the version of
// the stored copy, and a refused update changes nothing.
func testVersions(t *testing.T, b backend.Backend) {
	r1 := Release("p", "w", 1)
	mustCreate(t, b, r1)
	if r1.Version == "" {
		t.Fatal("CreateRelease left Version empty")
	}
	got, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil || got.Version != r1.Version {
		t.Fatalf("GetRelease: version %q (%v), want the created %q", versionOf(got), err, r1.Version)
	}
	if l, err := b.LatestRelease(ctx, "p", "w"); err != nil || l.Version != r1.Version {
		t.Fatalf("LatestRelease: version %q (%v), want %q", versionOf(l), err, r1.Version)
	}
	if list, err := b.ListReleases(ctx, "p", "w"); err != nil || len(list) != 1 || list[0].Version != r1.Version {
		t.Fatalf("ListReleases: %d releases (%v), want one of version %q", len(list), err, r1.Version)
	}

	read := *got // a copy read before the update below
	v1 := got.Version
	got.Phase = engine.PhaseSucceeded
	got.ModifyTime = got.ModifyTime.Add(time.Second)
	if err := b.UpdateRelease(ctx, got); err != nil {
		t.Fatalf("UpdateRelease: %v", err)
	}
	if got.Version == "" || got.Version == v1 {
		t.Fatalf("UpdateRelease: version %q after update, was %q: want a new one", got.Version, v1)
	}
	again, err := b.GetRelease(ctx, "p", "w", 1)
	requireRelease(t, "GetRelease after update", again, err, got)

	// A writer holding the copy from before the update loses, and changes nothing.
	stale := read
	stale.Phase, stale.Error = engine.PhaseFailed, "stale writer"
	err = b.UpdateRelease(ctx, &stale)
	if !errors.Is(err, backend.ErrConflict) {
		t.Fatalf("UpdateRelease with a stale version: %v, want ErrConflict", err)
	}
	if !strings.Contains(err.Error(), "p/w#1") {
		t.Fatalf("UpdateRelease with a stale version: %q does not name the release p/w#1", err)
	}
	if stale.Version != v1 {
		t.Fatalf("refused UpdateRelease changed the caller's Version to %q", stale.Version)
	}
	again, err = b.GetRelease(ctx, "p", "w", 1)
	requireRelease(t, "GetRelease after a refused update", again, err, got)

	// Neither another revision's version, nor made-up or missing ones, will do.
	r2 := Release("p", "w", 2)
	mustCreate(t, b, r2)
	for _, v := range []string{got.Version, "not-a-version", `"0123456789abcdef0123456789abcdef"`} {
		other := *r2
		other.Version, other.Error = v, "wrong version"
		if err := b.UpdateRelease(ctx, &other); !errors.Is(err, backend.ErrConflict) {
			t.Fatalf("UpdateRelease of revision 2 with version %q: %v, want ErrConflict", v, err)
		}
	}
	noVersion := *r2
	noVersion.Version, noVersion.Error = "", "no version"
	if err := b.UpdateRelease(ctx, &noVersion); err == nil || errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("UpdateRelease without a version: %v, want an error", err)
	}
	again, err = b.GetRelease(ctx, "p", "w", 2)
	requireRelease(t, "revision 2 after refused updates", again, err, r2)

	// A successful update's version is good for the next one.
	again.Phase = engine.PhaseFailed
	for i := range 3 {
		again.Error = fmt.Sprintf("update %d", i)
		if err := b.UpdateRelease(ctx, again); err != nil {
			t.Fatalf("chained UpdateRelease %d: %v", i, err)
		}
	}
	final, err := b.GetRelease(ctx, "p", "w", 2)
	requireRelease(t, "after chained updates", final, err, again)
}

func versionOf(r *engine.Release) string {
	if r == nil {
		return "<no release>"
	}
	return r.Version
}

// testConcurrentUpdate: of 20 writers updating the same copy at once, exactly one
// succeeds and the others get ErrConflict.
func testConcurrentUpdate(t *testing.T, b backend.Backend) {
	mustCreate(t, b, Release("p", "w", 1))
	base, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	mine := make([]*engine.Release, 20)
	for i := range mine {
		r := *base
		r.RunID, r.Phase = fmt.Sprintf("updater-%d", i), engine.PhaseFailed
		mine[i] = &r
	}
	winner := race(t, len(mine), "updaters of one version", backend.ErrConflict, func(i int) error {
		return b.UpdateRelease(ctx, mine[i])
	})
	got, err := b.GetRelease(ctx, "p", "w", 1)
	requireRelease(t, "after concurrent updates", got, err, mine[winner])
}

// testUnlock: a release left in a non-final phase by a run that died is closed as
// failed with a compare-and-swap, and the dead run's late write cannot undo that.
func testUnlock(t *testing.T, b backend.Backend) {
	stuck := Release("p", "w", 1)
	stuck.Phase = engine.PhaseApplying
	mustCreate(t, b, stuck)
	dead, err := b.GetRelease(ctx, "p", "w", 1) // the run's own copy, before it died
	if err != nil {
		t.Fatal(err)
	}
	deadCopy := *dead

	unlock, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	unlock.Phase, unlock.Error = engine.PhaseFailed, "unlocked: run-1 ended without finishing"
	if err := b.UpdateRelease(ctx, unlock); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	deadCopy.Phase = engine.PhaseSucceeded
	if err := b.UpdateRelease(ctx, &deadCopy); !errors.Is(err, backend.ErrConflict) {
		t.Fatalf("the dead run's late update: %v, want ErrConflict", err)
	}
	got, err := b.LatestRelease(ctx, "p", "w")
	requireRelease(t, "after unlock", got, err, unlock)
	mustCreate(t, b, Release("p", "w", 2))
}
