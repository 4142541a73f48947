package release_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// TestRollbackAfterHistoryLimit: a collection with a release history limit
// (runspec.GCInput.Releases) removes the older revisions; a rollback to one
// of them is refused naming the stack, the revision and the oldest kept one,
// while a rollback to a kept one, or to the last succeeded apply, still
// works.
func TestRollbackAfterHistoryLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m := release.New(b, nil, &runs{})
		// 1 succeeded apply, 2 failed apply, 3 succeeded destroy, 4 failed
		// apply, 5 and 6 succeeded applies.
		outcomes := []struct {
			op    engine.Operation
			phase engine.Phase
		}{
			{engine.OperationApply, engine.PhaseSucceeded},
			{engine.OperationApply, engine.PhaseFailed},
			{engine.OperationDestroy, engine.PhaseSucceeded},
			{engine.OperationApply, engine.PhaseFailed},
			{engine.OperationApply, engine.PhaseSucceeded},
			{engine.OperationApply, engine.PhaseSucceeded},
		}
		for i, o := range outcomes {
			in := begin("p", "w", fmt.Sprint("run-", i+1), putSpec(t, b, ns(fmt.Sprint("a", i))))
			in.Operation = o.op
			info, err := m.Begin(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: o.phase, Error: "e"}); err != nil {
				t.Fatal(err)
			}
		}
		in := runspec.GCInput{RunLogs: backend.DefaultRunLogRetention, DriftReports: backend.DefaultDriftRetention,
			Requests: backend.DefaultRequestRetention, Grace: backend.DefaultGCGrace, Releases: 2}
		rep, err := m.CollectGarbage(ctx, in, time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if res := release.GCResultOf(rep); res.Revisions != 4 || res.PrunedWorkspaces != 1 {
			t.Fatalf("collection with a limit of 2: %+v, want revisions 1 to 4 of one workspace removed", res)
		}
		for _, tc := range []struct {
			revision int
			want     int
			wantErr  string
		}{
			{revision: 0, want: 5},
			{revision: 5, want: 5},
			{revision: 1, wantErr: "cannot roll back to revision 1 of p/w: the release history limit (--retain-releases) removed it; the oldest kept revision is 5"},
			{revision: 4, wantErr: "cannot roll back to revision 4 of p/w: the release history limit (--retain-releases) removed it; the oldest kept revision is 5"},
			{revision: 7, wantErr: "cannot roll back to revision 7: p/w has revisions 5 to 6"},
		} {
			r, err := m.RollbackTarget(ctx, "p", "w", tc.revision, false)
			if tc.wantErr != "" {
				if !errors.Is(err, release.ErrNoTarget) || err.Error() != tc.wantErr {
					t.Fatalf("RollbackTarget(%d): %v, want %q", tc.revision, err, tc.wantErr)
				}
				continue
			}
			if err != nil || r.Revision != tc.want {
				t.Fatalf("RollbackTarget(%d) = %v, %v; want revision %d", tc.revision, r, err, tc.want)
			}
		}
		// The next run starts from the latest, as before.
		info, err := m.Begin(ctx, begin("p", "w", "run-7", putSpec(t, b, ns("a7"))))
		if err != nil {
			t.Fatal(err)
		}
		if info.Key.Revision != 7 || info.PriorRevision != 6 {
			t.Fatalf("the run after the collection: %+v, want revision 7 from 6", info)
		}
	})
}

// TestDriftCheckAfterHistoryLimit: a stack whose applies all failed and
// whose older revisions the history limit removed has nothing to check
// (ErrNoRelease), as before they were removed, rather than failing to read
// a removed revision.
func TestDriftCheckAfterHistoryLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m := release.New(b, newFakeRuntime(), &runs{})
		for i := range 4 {
			info, err := m.Begin(ctx, begin("p", "w", fmt.Sprint("run-", i+1), putSpec(t, b, ns(fmt.Sprint("a", i)))))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseFailed, Error: "e"}); err != nil {
				t.Fatal(err)
			}
		}
		in := runspec.GCInput{RunLogs: backend.DefaultRunLogRetention, DriftReports: backend.DefaultDriftRetention,
			Requests: backend.DefaultRequestRetention, Grace: backend.DefaultGCGrace, Releases: 2}
		if rep, err := m.CollectGarbage(ctx, in, time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)); err != nil || rep.Revisions != 2 {
			t.Fatalf("collection with a limit of 2: %+v, %v; want revisions 1 and 2 removed", rep.Pruned, err)
		}
		// A manager of its own: this one cached the revisions it read.
		fresh := release.New(b, newFakeRuntime(), &runs{})
		_, _, err := fresh.CheckDrift(ctx, release.DriftInput{Project: "p", Workspace: "w", RunID: "c1", CheckTime: time.Now()})
		if !errors.Is(err, release.ErrNoRelease) {
			t.Fatalf("drift check with only failed revisions kept: %v, want ErrNoRelease", err)
		}
	})
}
