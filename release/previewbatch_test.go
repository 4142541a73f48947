package release_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// listingRuntime is the in-memory runtime with a runtime.LiveReader that
// calls an object unchanged when the desired attributes equal it, and counts
// the dry-runs asked of it and the resources it read together.
type listingRuntime struct {
	*memory.Runtime
	dryRuns atomic.Int64
	listed  atomic.Int64
	// reads: resources read alone (Read), not in a ReadLive.
	reads atomic.Int64
	// plan: ReadLive gives each object that changes its Planned object (the
	// in-memory runtime's dry-run, not counted), as a runtime sure of it does.
	plan bool
	// changing: ReadLiveOptions.Changing of the last ReadLive.
	changing atomic.Bool
}

func (l *listingRuntime) Read(ctx context.Context, r *engine.Resource) (*engine.Resource, error) {
	l.reads.Add(1)
	return l.Runtime.Read(ctx, r)
}

func (l *listingRuntime) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return l, nil
}

func (l *listingRuntime) Apply(ctx context.Context, r *engine.Resource, opts runtime.ApplyOptions) (*engine.Resource, error) {
	if opts.DryRun {
		l.dryRuns.Add(1)
	}
	return l.Runtime.Apply(ctx, r, opts)
}

func (l *listingRuntime) ReadLive(ctx context.Context, desired []*engine.Resource, opts runtime.ReadLiveOptions) []runtime.Live {
	l.listed.Add(int64(len(desired)))
	l.changing.Store(opts.Changing)
	out := make([]runtime.Live, len(desired))
	for i, d := range desired {
		live, err := l.Runtime.Read(ctx, d)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
		case err != nil:
			out[i].Err = err
		default:
			out[i].Resource = live
			out[i].Unchanged = reflect.DeepEqual(engine.Normalize(d.Attributes), live.Attributes)
			if l.plan && opts.Plan && !out[i].Unchanged {
				if out[i].Planned, err = l.Runtime.Apply(ctx, d, runtime.ApplyOptions{DryRun: true}); err != nil {
					out[i].Err = err
				}
			}
		}
	}
	return out
}

// TestPreviewBatchSameAsPreview: previewing in a batch gives each resource
// the change Preview gives it (unchanged, updated, created, deleted, drifted)
// and the same answer whether its record needs a refresh (an unchanged
// resource whose dependsOn changed), writes nothing, dry-runs only the
// resources that change and reads none of them alone.
func TestPreviewBatchSameAsPreview(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rt := &listingRuntime{Runtime: memory.New()}
		m := release.New(b, rt, &runs{})
		same, changed, drifted, gone, deps := cm("same", "1"), cm("changed", "1"), cm("drifted", "1"), cm("gone", "1"), cm("deps", "1")
		first := started(t, b, m, same, changed, drifted, gone, deps)
		var nodes1 []release.Node
		for _, r := range []engine.Resource{same, changed, drifted, gone, deps} {
			nodes1 = append(nodes1, first(r.ID))
		}
		if _, err := m.Batch(ctx, nodes1, nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: nodes1[0].Key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		// Someone adds a label to drifted: the apply puts it back.
		d := drifted
		d.Attributes = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "drifted", "namespace": "a", "labels": map[string]any{"x": "y"}}, "data": map[string]any{"v": "1"}}
		if _, err := rt.Runtime.Apply(ctx, &d, runtime.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}

		added := cm("added", "1")
		// deps is unchanged but depends on one more resource: the release
		// must record its new dependsOn.
		deps2 := deps
		deps2.DependsOn = append([]string{same.ID}, deps.DependsOn...)
		info, err := m.Begin(ctx, begin("p", "w", "run-2", putSpec(t, b, same, cm("changed", "2"), drifted, added, deps2)))
		if err != nil {
			t.Fatal(err)
		}
		node := nodes(info)
		ids := []string{same.ID, changed.ID, drifted.ID, added.ID, gone.ID, deps.ID}
		// As the workflow sends them: a preview batch does not mark the
		// resource the spec dropped (gone) as one to delete.
		var batch []release.Node
		for _, id := range ids {
			batch = append(batch, node(id))
		}
		rt.dryRuns.Store(0)
		rt.reads.Store(0)
		changes, errs, refresh, err := m.PreviewBatch(ctx, batch, "run-2")
		if err != nil {
			t.Fatal(err)
		}
		if n := rt.dryRuns.Load(); n != 2 {
			t.Errorf("%d dry-runs, want 2 (the changed and the drifted resource; none for the unchanged, the new or the deleted)", n)
		}
		if n := rt.reads.Load(); n != 0 {
			t.Errorf("%d resources read alone, want none (all are read together; the changed and the drifted are dry-run from what that read found)", n)
		}
		wantAction := []engine.Action{engine.UnChanged, engine.Update, engine.Update, engine.Create, engine.Delete, engine.UnChanged}
		for i, n := range batch {
			if errs[i] != nil {
				t.Fatalf("%s: %v", n.ID, errs[i])
			}
			c, r, err := m.Preview(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(changes[i], c) || refresh[i] != r {
				t.Errorf("%s: batch %+v (refresh %v), alone %+v (refresh %v)", n.ID, changes[i], refresh[i], c, r)
			}
			if changes[i].Action != wantAction[i] {
				t.Errorf("%s: %s, want %s", n.ID, changes[i].Action, wantAction[i])
			}
			if want := n.ID == deps.ID; refresh[i] != want {
				t.Errorf("%s: refresh %v, want %v (only deps, whose dependsOn changed)", n.ID, refresh[i], want)
			}
		}
		// Previews write nothing; the refresh, asked for, records deps with
		// its new dependsOn, as the previews of runs before it did at once.
		if entries, err := b.ListStateEntries(ctx, info.Key); err != nil || len(entries) != 0 {
			t.Fatalf("previews wrote state entries: %+v, %v", entries, err)
		}
		if n, err := m.Refresh(ctx, []release.Node{node(deps.ID)}, "run-2/refresh"); err != nil || n != 1 {
			t.Fatalf("Refresh = %d, %v; want 1 recorded", n, err)
		}
		refreshed, err := b.ListStateEntries(ctx, info.Key)
		if err != nil || len(refreshed) != 1 || !reflect.DeepEqual(refreshed[deps.ID].Resource.DependsOn, deps2.DependsOn) {
			t.Fatalf("refreshed state %+v (%v), want deps with its new dependsOn", refreshed, err)
		}
		if err := b.ClearStateEntries(ctx, info.Key); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.PreviewBatchAndRefresh(ctx, batch, "run-2"); err != nil {
			t.Fatal(err)
		}
		if atOnce, err := b.ListStateEntries(ctx, info.Key); err != nil || !reflect.DeepEqual(atOnce, refreshed) {
			t.Errorf("state recorded by PreviewBatchAndRefresh %+v (%v), by Refresh %+v", atOnce, err, refreshed)
		}
	})
}

// TestPreviewBatchTakesPlannedChanges: an object kumo recorded whose change
// the runtime computed (runtime.Live.Planned) is previewed as Preview does,
// with no dry-run; one kumo did not record (an adoption) is still dry-run,
// where its conflicts with other managers are found.
func TestPreviewBatchTakesPlannedChanges(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rt := &listingRuntime{Runtime: memory.New(), plan: true}
		m := release.New(b, rt, &runs{})
		changed := cm("changed", "1")
		first := started(t, b, m, changed)
		n1 := first(changed.ID)
		if _, err := m.Batch(ctx, []release.Node{n1}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: n1.Key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		// Made outside kumo: applying it adopts it.
		other := cm("other", "1")
		if _, err := rt.Runtime.Apply(ctx, &other, runtime.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		info, err := m.Begin(ctx, begin("p", "w", "run-2", putSpec(t, b, cm("changed", "2"), cm("other", "2"))))
		if err != nil {
			t.Fatal(err)
		}
		node := nodes(info)
		batch := []release.Node{node(changed.ID), node(other.ID)}
		rt.dryRuns.Store(0)
		changes, errs, _, err := m.PreviewBatch(ctx, batch, "run-2")
		if err != nil {
			t.Fatal(err)
		}
		if n := rt.dryRuns.Load(); n != 1 {
			t.Errorf("%d dry-runs, want 1 (the adopted object; the recorded one is planned)", n)
		}
		if n := rt.reads.Load(); n != 0 {
			t.Errorf("%d resources read alone, want none", n)
		}
		for i, n := range batch {
			if errs[i] != nil {
				t.Fatalf("%s: %v", n.ID, errs[i])
			}
			c, _, err := m.Preview(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(changes[i], c) {
				t.Errorf("%s: batch %+v, alone %+v", n.ID, changes[i], c)
			}
			if changes[i].Action != engine.Update && changes[i].Action != engine.Adopt {
				t.Errorf("%s: %s, want an update or adoption", n.ID, changes[i].Action)
			}
		}
	})
}

// TestPreviewBatchTellsTheReadOfAChangedSpec: the read of a preview batch is
// told its objects are likely changing (runtime.ReadLiveOptions.Changing)
// when the run applies another spec than the release before it to what that
// release recorded, and not on the first apply, a re-apply of the same spec,
// a spec that only adds and drops resources, or a destroy.
func TestPreviewBatchTellsTheReadOfAChangedSpec(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rt := &listingRuntime{Runtime: memory.New()}
		m := release.New(b, rt, &runs{})
		a := cm("a", "1")
		run := 0
		// next previews (and applies) a run of spec, and tells what the read
		// was told.
		next := func(spec []engine.Resource, deletes ...string) bool {
			t.Helper()
			run++
			info, err := m.Begin(ctx, begin("p", "w", fmt.Sprintf("run-%d", run), putSpec(t, b, spec...)))
			if err != nil {
				t.Fatal(err)
			}
			node := nodes(info)
			// As the workflow sends them: the preview batch does not mark
			// what the spec dropped as to delete; the apply's batch does.
			var preview, batch []release.Node
			for _, r := range spec {
				preview, batch = append(preview, node(r.ID)), append(batch, node(r.ID))
			}
			for _, id := range deletes {
				n := node(id)
				preview = append(preview, n)
				n.Delete = true
				batch = append(batch, n)
			}
			rt.changing.Store(false)
			if _, _, _, err := m.PreviewBatch(ctx, preview, fmt.Sprintf("run-%d", run)); err != nil {
				t.Fatal(err)
			}
			changing := rt.changing.Load()
			if _, err := m.Batch(ctx, batch, nil, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
				t.Fatal(err)
			}
			return changing
		}
		for _, step := range []struct {
			name    string
			spec    []engine.Resource
			deletes []string
			want    bool
		}{
			{"the first apply", []engine.Resource{a}, nil, false},
			{"the same spec again", []engine.Resource{a}, nil, false},
			{"a changed spec", []engine.Resource{cm("a", "2")}, nil, true},
			{"a changed spec that only adds and drops", []engine.Resource{cm("b", "1")}, []string{a.ID}, false},
			{"only deletes", nil, []string{"v1:ConfigMap:a:b"}, false},
		} {
			if got := next(step.spec, step.deletes...); got != step.want {
				t.Errorf("%s: the read was told changing %v, want %v", step.name, got, step.want)
			}
		}
	})
}
