package release_test

import (
	"context"
	"errors"
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
// the dry-runs asked of it.
type listingRuntime struct {
	*memory.Runtime
	dryRuns atomic.Int64
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

func (l *listingRuntime) ReadLive(ctx context.Context, desired []*engine.Resource, _ runtime.ReadLiveOptions) []runtime.Live {
	out := make([]runtime.Live, len(desired))
	for i, d := range desired {
		live, err := l.Read(ctx, d)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
		case err != nil:
			out[i].Err = err
		default:
			out[i].Resource = live
			out[i].Unchanged = reflect.DeepEqual(engine.Normalize(d.Attributes), live.Attributes)
		}
	}
	return out
}

// TestPreviewBatchSameAsPreview: previewing in a batch gives each resource
// the change Preview gives it (unchanged, updated, created, deleted, drifted)
// and the same refreshed state (an unchanged resource whose dependsOn
// changed), and dry-runs only the resources that change.
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
		var batch []release.Node
		for _, id := range ids {
			n := node(id)
			n.Delete = id == gone.ID
			batch = append(batch, n)
		}
		rt.dryRuns.Store(0)
		changes, errs, refresh, err := m.PreviewBatch(ctx, batch, "run-2")
		if err != nil {
			t.Fatal(err)
		}
		if n := rt.dryRuns.Load(); n != 2 {
			t.Errorf("%d dry-runs, want 2 (the changed and the drifted resource; none for the unchanged, the new or the deleted)", n)
		}
		wantAction := []engine.Action{engine.UnChanged, engine.Update, engine.Update, engine.Create, engine.Delete, engine.UnChanged}
		var alone []backend.StateEntry
		for i, n := range batch {
			if errs[i] != nil {
				t.Fatalf("%s: %v", n.ID, errs[i])
			}
			c, r, err := m.Preview(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			if r != nil {
				alone = append(alone, *r)
			}
			if !reflect.DeepEqual(changes[i], c) {
				t.Errorf("%s: batch %+v, alone %+v", n.ID, changes[i], c)
			}
			if changes[i].Action != wantAction[i] {
				t.Errorf("%s: %s, want %s", n.ID, changes[i].Action, wantAction[i])
			}
		}
		if len(refresh) != 1 || refresh[0].ID != deps.ID || !reflect.DeepEqual(refresh[0].Resource.DependsOn, deps2.DependsOn) {
			t.Errorf("refreshed state %+v, want deps with its new dependsOn", refresh)
		}
		if !reflect.DeepEqual(refresh, alone) {
			t.Errorf("refreshed state: batch %+v, alone %+v", refresh, alone)
		}
	})
}
