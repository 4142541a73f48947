package backend_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
)

// hookDriver runs a hook once, before a write or after a delete of a key.
type hookDriver struct {
	backend.Driver
	mu          sync.Mutex
	beforeWrite map[string]func()
	afterDelete map[string]func()
}

func (h *hookDriver) take(m map[string]func(), key string) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := m[key]
	delete(m, key)
	return f
}

func (h *hookDriver) Write(ctx context.Context, key string, data []byte, cond backend.Condition) (string, error) {
	if f := h.take(h.beforeWrite, key); f != nil {
		f()
	}
	return h.Driver.Write(ctx, key, data, cond)
}

func (h *hookDriver) Delete(ctx context.Context, key string) error {
	err := h.Driver.Delete(ctx, key)
	if f := h.take(h.afterDelete, key); f != nil {
		f()
	}
	return err
}

func newHooked(t *testing.T) (*hookDriver, *backend.Store) {
	t.Helper()
	d, err := local.NewDriver(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &hookDriver{Driver: d, beforeWrite: map[string]func(){}, afterDelete: map[string]func(){}}
	return h, backend.NewStore(h)
}

func releaseWith(rev int, spec *engine.Spec, state []engine.Resource) *engine.Release {
	r := backendtest.Release("p", "w", rev)
	r.Spec, r.SpecHash = spec, engine.HashSpec(spec)
	r.State = &engine.State{Resources: state}
	return r
}

func resources(n int, v int64) []engine.Resource {
	out := make([]engine.Resource, n)
	for i := range out {
		out[i] = backendtest.Resource("v1:ConfigMap:demo:c"+strings.Repeat("x", i), v+int64(i))
	}
	return out
}

// TestReleaseKeepsWhatCollectRemovedMeanwhile: a release whose spec and a
// chunk were already stored (unreferenced, so a collection may remove them)
// still reads back whole when they are removed between the writer finding
// them and its release file being written.
func TestReleaseKeepsWhatCollectRemovedMeanwhile(t *testing.T) {
	ctx := context.Background()
	h, s := newHooked(t)
	spec := &engine.Spec{Resources: resources(2, 1)}
	if _, err := s.PutSpec(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRelease(ctx, releaseWith(1, spec, resources(2, 10))); err != nil {
		t.Fatal(err)
	}
	// A create that lost the race for revision 1 left the chunks of state Y.
	y := resources(3, 20)
	lost := releaseWith(1, &engine.Spec{Resources: resources(1, 5)}, y)
	if err := s.CreateRelease(ctx, lost); err == nil {
		t.Fatal("second create of revision 1 succeeded")
	}
	orphans, err := h.List(ctx, "releases/p/w/chunks")
	if err != nil {
		t.Fatal(err)
	}
	// Revision 2 has state Y: it finds Y's chunks there. Just before its
	// release file is written, they and its spec are removed.
	spec2 := &engine.Spec{Resources: resources(1, 5)}
	h.beforeWrite["releases/p/w/2.yaml"] = func() {
		_ = h.Driver.Delete(ctx, "specs/"+engine.HashSpec(spec2)+".yaml")
		for _, e := range orphans {
			_ = h.Driver.Delete(ctx, "releases/p/w/chunks/"+e.Name)
		}
	}
	r2 := releaseWith(2, spec2, y)
	if err := s.CreateRelease(ctx, r2); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.beforeWrite["releases/p/w/2.yaml"]; ok {
		t.Fatal("the hook did not run")
	}
	got, err := s.GetRelease(ctx, "p", "w", 2)
	if err != nil {
		t.Fatalf("revision 2 after its spec and chunks were removed during the write: %v", err)
	}
	if len(got.State.Resources) != 3 || len(got.Spec.Resources) != 1 {
		t.Errorf("revision 2 read back with %d resources, spec of %d", len(got.State.Resources), len(got.Spec.Resources))
	}
}

// TestCollectWritesBackWhatANewReleaseNames: a release file naming an
// unreferenced spec written while Collect removes that spec: Collect's second
// look at the releases writes the spec back.
func TestCollectWritesBackWhatANewReleaseNames(t *testing.T) {
	ctx := context.Background()
	h, s, specObj, write := unreferencedSpec(t)
	h.afterDelete[specObj] = write
	rep := collectPastGrace(t, h, s, specObj)
	if len(rep.Restored) != 1 || rep.Restored[0] != specObj || rep.Specs != 0 {
		t.Errorf("report: restored %v, removed %v (%d specs), want the spec written back and not counted", rep.Restored, rep.Removed, rep.Specs)
	}
	if _, err := s.GetRelease(ctx, "p", "w", 1); err != nil {
		t.Fatalf("the release written during the collection: %v", err)
	}
}

// unreferencedSpec stores, in a hooked backend, a spec no release names,
// and returns its key and a function that writes a release of "p/w" naming
// it: its file and chunks made in another backend and copied in without the
// spec, as a writer that found the spec stored, before a collection removed
// it, writes its release afterwards.
func unreferencedSpec(t *testing.T) (h *hookDriver, s *backend.Store, specObj string, write func()) {
	t.Helper()
	ctx := context.Background()
	h, s = newHooked(t)
	spec := &engine.Spec{Resources: resources(2, 1)}
	hash, err := s.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	od, err := local.NewDriver(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := backend.NewStore(od).CreateRelease(ctx, releaseWith(1, spec, resources(2, 7))); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, dir := range []string{"releases/p/w", "releases/p/w/chunks"} {
		ents, err := od.List(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !e.Dir {
				keys = append(keys, dir+"/"+e.Name)
			}
		}
	}
	return h, s, "specs/" + hash + ".yaml", func() {
		for _, k := range keys {
			data, _, err := od.Read(ctx, k)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := h.Driver.Write(ctx, k, data, backend.Condition{}); err != nil {
				t.Error(err)
			}
		}
	}
}

// gcStart is when the race tests' collections start.
var gcStart = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

// collectPastGrace runs a collection at gcStart and one a grace later, which
// must remove the unreferenced specObj, keeping a copy in its trash, and
// returns the second one's report.
func collectPastGrace(t *testing.T, h *hookDriver, s *backend.Store, specObj string) backend.GCReport {
	t.Helper()
	ctx := context.Background()
	p := backend.DefaultGCPolicy()
	if _, err := backend.Collect(ctx, s, p, gcStart, false); err != nil {
		t.Fatal(err)
	}
	rep, err := backend.Collect(ctx, s, p, gcStart.Add(p.Grace), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h.afterDelete[specObj]; ok {
		t.Fatal("Collect did not remove the unreferenced spec")
	}
	if ok, err := h.Exists(ctx, "gc/trash/"+specObj); err != nil || !ok {
		t.Fatalf("the removed spec's copy in the trash: there %v (%v)", ok, err)
	}
	return rep
}

// TestAReleaseReadsWhileCollectRemovesWhatItNames: a release written while
// Collect removes the spec it names reads whole at once, before Collect
// looks at the releases again and writes the spec back.
func TestAReleaseReadsWhileCollectRemovesWhatItNames(t *testing.T) {
	ctx := context.Background()
	h, s, specObj, write := unreferencedSpec(t)
	var readErr error
	h.afterDelete[specObj] = func() {
		write()
		_, readErr = s.LatestRelease(ctx, "p", "w")
	}
	collectPastGrace(t, h, s, specObj)
	if readErr != nil {
		t.Fatalf("the release read between the spec's removal and its write-back: %v", readErr)
	}
}

// TestCollectWritesBackFromItsTrash: a release naming a removed spec,
// written after Collect looked at the releases again by a writer that then
// stopped (so nobody wrote the spec back), reads from the trash, and the
// collection that empties the trash writes the spec back first.
func TestCollectWritesBackFromItsTrash(t *testing.T) {
	ctx := context.Background()
	h, s, specObj, write := unreferencedSpec(t)
	h.afterDelete[specObj] = func() {} // the removal, seen
	collectPastGrace(t, h, s, specObj)
	if ok, err := h.Exists(ctx, specObj); err != nil || ok {
		t.Fatalf("the unreferenced spec after the grace: there %v (%v), want removed", ok, err)
	}
	write()
	if _, err := s.GetRelease(ctx, "p", "w", 1); err != nil {
		t.Fatalf("a release naming a spec in the trash: %v", err)
	}
	p := backend.DefaultGCPolicy()
	rep, err := backend.Collect(ctx, s, p, gcStart.Add(2*p.Grace), false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Restored, specObj) || rep.Total() != 0 {
		t.Errorf("the pass emptying the trash: restored %v, removed %v; want the spec written back", rep.Restored, rep.Removed)
	}
	if ok, err := h.Exists(ctx, "gc/trash/"+specObj); err != nil || ok {
		t.Errorf("the trash's copy after it was emptied: there %v (%v)", ok, err)
	}
	if _, err := s.GetRelease(ctx, "p", "w", 1); err != nil {
		t.Fatalf("the release after the trash was emptied: %v", err)
	}
}

// TestCollectRefusesAConcurrentCollection: the marks are written
// conditionally, so a collection that finds them changed stops before
// removing anything.
func TestCollectRefusesAConcurrentCollection(t *testing.T) {
	ctx := context.Background()
	h, s := newHooked(t)
	if err := s.PutRunLog(ctx, "run-1", "generate", []byte("x")); err != nil {
		t.Fatal(err)
	}
	p := backend.DefaultGCPolicy()
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	if _, err := backend.Collect(ctx, s, p, t0, false); err != nil {
		t.Fatal(err)
	}
	// Another collection writes the marks between this one reading and
	// claiming them.
	h.beforeWrite["gc/marks.json"] = func() {
		inner := backend.NewStore(h.Driver)
		if err := inner.PutRunLog(ctx, "run-2", "generate", []byte("y")); err != nil {
			t.Error(err)
		}
		if _, err := backend.Collect(ctx, inner, p, t0, false); err != nil {
			t.Error(err)
		}
	}
	_, err := backend.Collect(ctx, s, p, t0.Add(p.RunLogs), false)
	if err == nil || !strings.Contains(err.Error(), "another one is running") {
		t.Fatalf("concurrent collection: %v, want it refused", err)
	}
	if _, err := s.RunLog(ctx, "run-1"); err != nil {
		t.Errorf("the refused collection removed the run log: %v", err)
	}
}
