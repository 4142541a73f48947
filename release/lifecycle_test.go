package release_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

func ns(name string) engine.Resource {
	return engine.Resource{ID: "v1:Namespace:" + name, Type: engine.Kubernetes,
		Attributes: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
}

// cm is a ConfigMap in namespace "a" holding value.
func cm(name, value string) engine.Resource {
	return engine.Resource{ID: "v1:ConfigMap:a:" + name, Type: engine.Kubernetes, DependsOn: []string{"v1:Namespace:a"},
		Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "a"}, "data": map[string]any{"v": value}}}
}

func putSpec(t *testing.T, b backend.Backend, rs ...engine.Resource) string {
	t.Helper()
	h, err := b.PutSpec(ctx, &engine.Spec{Resources: rs})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func begin(p, w, run, spec string) release.BeginInput {
	return release.BeginInput{Project: p, Workspace: w, Operation: engine.OperationApply, SpecHash: spec, WorkflowID: "kumo/" + p + "/" + w, RunID: run}
}

// nodes returns the node input of id in the release info names.
func nodes(info release.Info) func(id string) release.Node {
	return func(id string) release.Node {
		return release.Node{Key: info.Key, SpecHash: info.SpecHash, PriorRevision: info.PriorRevision, ID: id}
	}
}

// started begins revision 1 of p/w over resources and returns the node input of id.
func started(t *testing.T, b backend.Backend, m *release.Manager, rs ...engine.Resource) func(id string) release.Node {
	t.Helper()
	info, err := m.Begin(ctx, begin("p", "w", "run-1", putSpec(t, b, rs...)))
	if err != nil {
		t.Fatal(err)
	}
	return nodes(info)
}

func getRelease(t *testing.T, b backend.Backend, rev int) *engine.Release {
	t.Helper()
	r, err := b.GetRelease(ctx, "p", "w", rev)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// beginRun1 begins revision 1 of p/w for run-1, alive, over a spec of
// Namespace a.
func beginRun1(t *testing.T, b backend.Backend) (m *release.Manager, rs *runs, spec string, info release.Info) {
	t.Helper()
	rs = &runs{}
	m = release.New(b, nil, rs)
	spec = putSpec(t, b, ns("a"))
	rs.set("run-1", true)
	info, err := m.Begin(ctx, begin("p", "w", "run-1", spec))
	if err != nil {
		t.Fatal(err)
	}
	return m, rs, spec, info
}

func TestBegin(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, rs, spec, info := beginRun1(t, b)
		want := release.Info{Key: backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 1}, SpecHash: spec}
		if !reflect.DeepEqual(info, want) {
			t.Fatalf("Begin = %+v, want %+v", info, want)
		}
		// A retry of the same run gets the same release, not another revision.
		again, err := m.Begin(ctx, begin("p", "w", "run-1", spec))
		if err != nil || !reflect.DeepEqual(again, info) {
			t.Fatalf("Begin again = %+v, %v; want %+v", again, err, info)
		}
		if r := getRelease(t, b, 1); r.Phase != engine.PhasePreviewing || r.RunID != "run-1" {
			t.Fatalf("revision 1 is %s by %s", r.Phase, r.RunID)
		}

		// Another run is refused while run-1 is alive, and told which run holds the stack.
		_, err = m.Begin(ctx, begin("p", "w", "run-2", spec))
		var lockErr *release.LockedError
		if !errors.Is(err, release.ErrLocked) || !errors.As(err, &lockErr) || lockErr.Release.RunID != "run-1" || !strings.Contains(err.Error(), "run-1") {
			t.Fatalf("Begin by run-2 while run-1 runs: %v, want ErrLocked naming run-1", err)
		}
		if _, err := b.GetRelease(ctx, "p", "w", 2); !errors.Is(err, backend.ErrNotFound) {
			t.Fatalf("a refused Begin created revision 2: %v", err)
		}

		// Once run-1 is gone, its release is closed as abandoned and run-2 goes on.
		rs.set("run-1", false)
		info2, err := m.Begin(ctx, begin("p", "w", "run-2", spec))
		if err != nil {
			t.Fatal(err)
		}
		if info2.Key.Revision != 2 || info2.PriorRevision != 1 {
			t.Fatalf("Begin after abandon = %+v, want revision 2 after 1", info2)
		}
		r1 := getRelease(t, b, 1)
		if r1.Phase != engine.PhaseFailed || !strings.Contains(r1.Error, "abandoned: run run-1 ended") {
			t.Fatalf("abandoned revision 1 is %s (%q)", r1.Phase, r1.Error)
		}
	})
}

// TestBeginConcurrent: runs racing for the same stack get one revision between
// them; the others are refused, naming the winner.
func TestBeginConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rs := &runs{}
		m := release.New(b, nil, rs)
		spec := putSpec(t, b, ns("a"))
		const n = 6
		for i := range n {
			rs.set(fmt.Sprint("run-", i), true)
		}
		var wg sync.WaitGroup
		infos := make([]release.Info, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { infos[i], errs[i] = m.Begin(ctx, begin("p", "w", fmt.Sprint("run-", i), spec)) })
		}
		wg.Wait()
		won := 0
		for i := range n {
			switch {
			case errs[i] == nil:
				won++
				if infos[i].Key.Revision != 1 {
					t.Errorf("run-%d got revision %d, want 1", i, infos[i].Key.Revision)
				}
			case !errors.Is(errs[i], release.ErrLocked):
				t.Errorf("run-%d: %v, want ErrLocked", i, errs[i])
			}
		}
		if won != 1 {
			t.Fatalf("%d runs began a release, want 1", won)
		}
		if all, err := b.ListReleases(ctx, "p", "w"); err != nil || len(all) != 1 {
			t.Fatalf("releases after the race: %d, %v", len(all), err)
		}
	})
}

func TestBeginDestroyStoresEmptySpec(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m := release.New(b, nil, &runs{})
		in := begin("p", "w", "run-1", "")
		in.Operation = engine.OperationDestroy
		info, err := m.Begin(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if info.SpecHash != putSpec(t, b) {
			t.Fatalf("destroy release spec %s is not the empty spec", info.SpecHash)
		}
	})
}

func TestSetPhase(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m := release.New(b, nil, &runs{})
		info, err := m.Begin(ctx, begin("p", "w", "run-1", putSpec(t, b, ns("a"))))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // a retry changes nothing
			if err := m.SetPhase(ctx, info.Key, engine.PhaseApplying, engine.People{}); err != nil {
				t.Fatal(err)
			}
			if r := getRelease(t, b, 1); r.Phase != engine.PhaseApplying {
				t.Fatalf("phase %s, want applying", r.Phase)
			}
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		if err := m.SetPhase(ctx, info.Key, engine.PhaseApplying, engine.People{}); !errors.Is(err, release.ErrFinal) || err.Error() != "revision 1 is already succeeded" {
			t.Fatalf("SetPhase of a finished release: %v, want ErrFinal", err)
		}
	})
}

func TestRecordAndFinish(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m := release.New(b, nil, &runs{})
		a, c, d := ns("a"), ns("c"), ns("d")
		// Revision 1 records a and d.
		info1, err := m.Begin(ctx, begin("p", "w", "run-1", putSpec(t, b, a, d)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []engine.Resource{d, a} {
			if err := m.Record(ctx, info1.Key, backend.StateEntry{ID: r.ID, Resource: &r}); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := m.Finish(ctx, release.FinishInput{Key: info1.Key, Phase: engine.PhaseSucceeded}); err != nil || n != 2 {
			t.Fatalf("Finish revision 1 = %d, %v; want 2 resources", n, err)
		}
		// Revision 2 wants c and a: it applies c, deletes d, leaves a as it was.
		info2, err := m.Begin(ctx, begin("p", "w", "run-2", putSpec(t, b, c, a)))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Record(ctx, info2.Key, backend.StateEntry{ID: c.ID, Resource: &c}); err != nil {
			t.Fatal(err)
		}
		tomb := backend.StateEntry{ID: d.ID, Deleted: true}
		for range 2 { // recording twice replaces the entry
			if err := m.Record(ctx, info2.Key, tomb); err != nil {
				t.Fatal(err)
			}
		}
		comp := &engine.Compensation{Resources: []string{"x"}}
		in := release.FinishInput{Key: info2.Key, Phase: engine.PhaseFailed, Error: "boom", Compensation: comp}
		n, err := m.Finish(ctx, in)
		if err != nil || n != 2 {
			t.Fatalf("Finish = %d, %v; want 2 resources", n, err)
		}
		first := getRelease(t, b, 2)
		var ids []string
		for _, r := range first.State.Resources {
			ids = append(ids, r.ID)
		}
		if want := []string{c.ID, a.ID}; !reflect.DeepEqual(ids, want) {
			t.Fatalf("state %v, want %v (spec order, d deleted)", ids, want)
		}
		if first.Phase != engine.PhaseFailed || first.Error != "boom" || !reflect.DeepEqual(first.Compensation, comp) || first.Spec == nil {
			t.Fatalf("finished release: %+v", first)
		}
		if left, err := b.ListStateEntries(ctx, info2.Key); err != nil || len(left) != 0 {
			t.Fatalf("entries left after Finish: %v, %v", left, err)
		}
		log, err := b.RunLog(ctx, "run-2")
		wantLog := "apply of p/w, revision 2\napplied v1:Namespace:c\ndeleted v1:Namespace:d\nundone x\nrevision 2 failed: boom\n"
		if err != nil || string(log) != wantLog {
			t.Fatalf("run log %q, %v; want %q", log, err, wantLog)
		}

		// Finishing again (a retry) returns the same and changes nothing, even
		// when asked for another outcome.
		in.Phase, in.Error = engine.PhaseSucceeded, ""
		if n, err := m.Finish(ctx, in); err != nil || n != 2 {
			t.Fatalf("Finish again = %d, %v", n, err)
		}
		if again := getRelease(t, b, 2); !reflect.DeepEqual(again, first) {
			t.Fatalf("second Finish changed the release:\n%+v\n%+v", again, first)
		}
	})
}

func TestLatestFinal(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rs := &runs{}
		m := release.New(b, nil, rs)
		if rev, err := m.LatestFinal(ctx, "p", "w"); err != nil || rev != 0 {
			t.Fatalf("LatestFinal with no release = %d, %v", rev, err)
		}
		spec := putSpec(t, b, ns("a"))
		info, err := m.Begin(ctx, begin("p", "w", "run-1", spec))
		if err != nil {
			t.Fatal(err)
		}
		if rev, err := m.LatestFinal(ctx, "p", "w"); err != nil || rev != 0 {
			t.Fatalf("LatestFinal with one running release = %d, %v", rev, err)
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		rs.set("run-2", true)
		if _, err := m.Begin(ctx, begin("p", "w", "run-2", spec)); err != nil {
			t.Fatal(err)
		}
		if rev, err := m.LatestFinal(ctx, "p", "w"); err != nil || rev != 1 {
			t.Fatalf("LatestFinal while revision 2 runs = %d, %v; want 1", rev, err)
		}
	})
}

func TestUnlock(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rs := &runs{}
		m := release.New(b, nil, rs)
		if _, err := m.Unlock(ctx, "p", "w"); !errors.Is(err, release.ErrNoRelease) || err.Error() != "p/w has no releases yet" {
			t.Fatalf("Unlock with no release: %v, want ErrNoRelease", err)
		}
		rs.set("run-1", true)
		a := ns("a")
		info, err := m.Begin(ctx, begin("p", "w", "run-1", putSpec(t, b, a)))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Record(ctx, info.Key, backend.StateEntry{ID: a.ID, Resource: &a}); err != nil {
			t.Fatal(err)
		}
		var lockErr *release.LockedError
		if _, err := m.Unlock(ctx, "p", "w"); !errors.As(err, &lockErr) || !errors.Is(err, release.ErrLocked) || !strings.Contains(err.Error(), "run run-1") {
			t.Fatalf("Unlock while the run is alive: %v, want ErrLocked naming run-1", err)
		}
		rs.set("run-1", false)
		r, err := m.Unlock(ctx, "p", "w")
		if err != nil {
			t.Fatal(err)
		}
		if r.Phase != engine.PhaseFailed || !strings.Contains(r.Error, "unlocked by `kumo release unlock`: its run run-1") || len(r.State.Resources) != 1 {
			t.Fatalf("unlocked release: %s %q, %d resources", r.Phase, r.Error, len(r.State.Resources))
		}
		// Unlocking again: nothing to unlock, and the release stays as it was.
		if _, err := m.Unlock(ctx, "p", "w"); !errors.Is(err, release.ErrNotLocked) {
			t.Fatalf("second Unlock: %v, want ErrNotLocked", err)
		}
		if again := getRelease(t, b, 1); !reflect.DeepEqual(again, r) {
			t.Fatalf("second Unlock changed the release")
		}
	})
}

func TestRollbackTarget(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m := release.New(b, nil, &runs{})
		if _, err := m.RollbackTarget(ctx, "p", "w", 0, false); !errors.Is(err, release.ErrNoTarget) {
			t.Fatalf("no releases: %v, want ErrNoTarget", err)
		}
		// 1 succeeded apply, 2 failed apply, 3 succeeded destroy, 4 failed apply.
		outcomes := []struct {
			op    engine.Operation
			phase engine.Phase
		}{
			{engine.OperationApply, engine.PhaseSucceeded},
			{engine.OperationApply, engine.PhaseFailed},
			{engine.OperationDestroy, engine.PhaseSucceeded},
			{engine.OperationApply, engine.PhaseFailed},
		}
		spec := putSpec(t, b, ns("a"))
		for i, o := range outcomes {
			in := begin("p", "w", fmt.Sprint("run-", i+1), spec)
			in.Operation = o.op
			info, err := m.Begin(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: o.phase, Error: "e"}); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			revision    int
			allowFailed bool
			want        int
			wantErr     string
		}{
			{revision: 0, want: 1}, // the last succeeded apply, skipping the destroy
			{revision: 1, want: 1},
			{revision: 2, wantErr: "revision 2 is failed (e); roll back to it anyway with --allow-failed"},
			{revision: 2, allowFailed: true, want: 2},
			{revision: 5, wantErr: "cannot roll back to revision 5: p/w has revisions 1 to 4"},
			{revision: -1, wantErr: "cannot roll back to revision -1: p/w has revisions 1 to 4"},
		} {
			for range 2 { // the same answer every time
				r, err := m.RollbackTarget(ctx, "p", "w", tc.revision, tc.allowFailed)
				if tc.wantErr != "" {
					if !errors.Is(err, release.ErrNoTarget) || err.Error() != tc.wantErr {
						t.Fatalf("RollbackTarget(%d, %v): %v, want %q", tc.revision, tc.allowFailed, err, tc.wantErr)
					}
					continue
				}
				if err != nil || r.Revision != tc.want {
					t.Fatalf("RollbackTarget(%d, %v) = %v, %v; want revision %d", tc.revision, tc.allowFailed, r, err, tc.want)
				}
			}
		}
	})
}

// TestBeginRefusesARunItCannotSee: two machines with their own Temporal share a
// backend; a release whose run this Temporal does not know may be alive on the
// other machine, so Begin refuses (naming it) instead of closing it as
// abandoned. `kumo release unlock` is how an operator says that run is gone.
func TestBeginRefusesARunItCannotSee(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rs := &runs{}
		m := release.New(b, nil, rs)
		spec := putSpec(t, b, ns("a"))
		rs.set("run-1", true)
		if _, err := m.Begin(ctx, begin("p", "w", "run-1", spec)); err != nil {
			t.Fatal(err)
		}
		rs.setUnknown("run-1")
		_, err := m.Begin(ctx, begin("p", "w", "run-2", spec))
		var lockErr *release.LockedError
		if !errors.As(err, &lockErr) || !errors.Is(err, release.ErrLocked) || !strings.Contains(err.Error(), "locked by run run-1") || !strings.Contains(err.Error(), "another machine") {
			t.Fatalf("Begin while run-1 is unknown here: %v, want ErrLocked naming run-1", err)
		}
		if r := getRelease(t, b, 1); r.Phase != engine.PhasePreviewing {
			t.Fatalf("revision 1 of the unknown run is %s, want it left alone", r.Phase)
		}
		if _, err := b.GetRelease(ctx, "p", "w", 2); !errors.Is(err, backend.ErrNotFound) {
			t.Fatalf("a refused Begin created revision 2: %v", err)
		}
		r, err := m.Unlock(ctx, "p", "w")
		if err != nil || r.Phase != engine.PhaseFailed {
			t.Fatalf("Unlock of the unknown run's release: %v, %v", r, err)
		}
		if info, err := m.Begin(ctx, begin("p", "w", "run-2", spec)); err != nil || info.Key.Revision != 2 {
			t.Fatalf("Begin after unlock = %+v, %v; want revision 2", info, err)
		}
	})
}

// A release named by its run keeps its label; a name another release of the
// stack has is refused, naming that revision, and RevisionOfVersion finds it.
func TestBeginLabel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m := release.New(b, nil, &runs{})
		spec := putSpec(t, b, ns("a"))
		in := begin("p", "w", "run-1", spec)
		in.Label = engine.ReleaseLabel{Version: "alpha1", Message: "first", SourceCommit: strings.Repeat("ab", 20)}
		if _, err := m.Begin(ctx, in); err != nil {
			t.Fatal(err)
		}
		if r := getRelease(t, b, 1); r.Label != in.Label {
			t.Fatalf("revision 1's label = %+v, want %+v", r.Label, in.Label)
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 1}, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		again := begin("p", "w", "run-2", spec)
		again.Label.Version = "alpha1"
		if _, err := m.Begin(ctx, again); !errors.Is(err, release.ErrInvalid) || !strings.Contains(err.Error(), "revision 1 of p/w already has it") {
			t.Fatalf("a second alpha1: %v, want ErrInvalid naming revision 1", err)
		}
		again.Label.Version = "-x"
		if _, err := m.Begin(ctx, again); !errors.Is(err, release.ErrInvalid) {
			t.Fatalf("version -x: %v, want ErrInvalid", err)
		}
		if rev, err := m.RevisionOfVersion(ctx, "p", "w", "alpha1"); err != nil || rev != 1 {
			t.Errorf("RevisionOfVersion(alpha1) = %d, %v", rev, err)
		}
		if _, err := m.RevisionOfVersion(ctx, "p", "w", "beta"); !errors.Is(err, release.ErrNoTarget) {
			t.Errorf("RevisionOfVersion(beta) = %v, want ErrNoTarget", err)
		}
	})
}
