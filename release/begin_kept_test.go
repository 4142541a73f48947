package release_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// countingBackend counts the latest releases read whole; its store can be
// swapped for another under the Manager.
type countingBackend struct {
	backend.Backend
	wholeReads atomic.Int32
}

func (c *countingBackend) LatestRelease(ctx context.Context, project, workspace string) (*engine.Release, error) {
	c.wholeReads.Add(1)
	return c.Backend.LatestRelease(ctx, project, workspace)
}

// TestBeginKeepsTheReleaseItFinished: the next run of a workspace starts
// from the release this worker finished without reading it back whole;
// one another worker finished, or a release of the same revision that is
// not that one (another run's: the backend was replaced), is read whole.
func TestBeginKeepsTheReleaseItFinished(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		cb := &countingBackend{Backend: b}
		m, _ := withRuntime(cb)
		x := cm("x", "1")
		applied(t, cb, m, "run-1", x)
		info, n := begun(t, cb, m, destroyBy("run-2"))
		if info.PriorRevision != 1 {
			t.Fatalf("Begin = %+v, want revision 1 its prior", info)
		}
		if n != 0 {
			t.Fatalf("Begin read the latest release whole %d times, want none: this worker finished it", n)
		}
		// The destroy deletes what revision 1 recorded.
		del := release.Node{Key: info.Key, PriorRevision: info.PriorRevision, ID: x.ID, Delete: true}
		if _, err := m.Batch(ctx, []release.Node{del}, nil, nil); err != nil {
			t.Fatal(err)
		}

		// Another worker (its own Manager) finishes revision 2: this one
		// reads it whole.
		other, _ := withRuntime(cb)
		if _, err := other.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		info, n = begun(t, cb, m, begin("p", "w", "run-3", putSpec(t, cb, x)))
		if info.PriorRevision != 2 {
			t.Fatalf("Begin after another worker's finish = %+v", info)
		}
		if n != 1 {
			t.Fatalf("Begin read the latest release whole %d times, want once: another worker finished it", n)
		}
	})
}

// TestBeginReadsAReplacedRelease: a Manager that finished revision 1 of a
// workspace, its backend's store replaced by one whose revision 1 another
// run recorded, starts the next run from that one, read whole: of another
// spec, and of the same spec, where only the run tells them apart.
func TestBeginReadsAReplacedRelease(t *testing.T) {
	first, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cb := &countingBackend{Backend: first}
	m, _ := withRuntime(cb)
	x := cm("x", "1")
	applied(t, cb, m, "run-1", x)

	second, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	y := cm("y", "1")
	m2, _ := withRuntime(second)
	applied(t, second, m2, "run-elsewhere", y)

	cb.Backend = second
	info, n := begun(t, cb, m, destroyBy("run-2"))
	if info.PriorRevision != 1 {
		t.Fatalf("Begin = %+v, want revision 1 its prior", info)
	}
	if n != 1 {
		t.Fatalf("Begin read the latest release whole %d times, want once: the one it kept is another run's", n)
	}
	plan, err := m.PlanGraph(ctx, release.PlanInput{Project: "p", Workspace: "w", SpecHash: info.SpecHash, PriorRevision: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Nodes) != 1 || plan.Nodes[0].ID != y.ID {
		t.Fatalf("the destroy plans %v, want y's delete: what the replaced revision 1 records", plan.Nodes)
	}

	// The same spec applied by another run: only the run tells them apart.
	third, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m3, _ := withRuntime(third)
	applied(t, third, m3, "run-other", x)
	fourth, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m4, _ := withRuntime(cb)
	cb.Backend = fourth
	applied(t, cb, m4, "run-1", x) // m4 keeps revision 1 of run-1
	cb.Backend = third
	if _, n := begun(t, cb, m4, destroyBy("run-3")); n != 1 {
		t.Fatalf("Begin read the latest release whole %d times, want once: the one it kept is of another run", n)
	}
}

// destroyBy is a destroy of p/w by run.
func destroyBy(run string) release.BeginInput {
	return release.BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationDestroy, WorkflowID: "kumo/p/w", RunID: run}
}

// begun begins in through m, a Manager over cb, and returns its release
// (after the first, a prior) and how often it read the latest release whole.
func begun(t *testing.T, cb *countingBackend, m *release.Manager, in release.BeginInput) (release.Info, int32) {
	t.Helper()
	before := cb.wholeReads.Load()
	info, err := m.Begin(ctx, in)
	if err != nil || info.PriorRevision < 1 {
		t.Fatalf("Begin = %+v, %v; want a release with a prior", info, err)
	}
	return info, cb.wholeReads.Load() - before
}

// applied applies rs as revision 1 of p/w by run through m and finishes it.
func applied(t *testing.T, b backend.Backend, m *release.Manager, run string, rs ...engine.Resource) {
	t.Helper()
	info, err := m.Begin(ctx, begin("p", "w", run, putSpec(t, b, rs...)))
	if err != nil {
		t.Fatal(err)
	}
	node := nodes(info)
	var ns []release.Node
	for _, r := range rs {
		ns = append(ns, node(r.ID))
	}
	if _, err := m.Batch(ctx, ns, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
		t.Fatal(err)
	}
}
