package release_test

import (
	"context"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// settlingWaiter is the memory runtime whose waits end healthy at once,
// having seen each object with a status its controller wrote after the apply.
type settlingWaiter struct{ *memory.Runtime }

func (s settlingWaiter) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return s, nil
}

func (s settlingWaiter) WaitHealthy(ctx context.Context, r *engine.Resource, opts runtime.WaitOptions) (health.Result, error) {
	live, err := s.Read(ctx, r)
	if err != nil {
		return health.Result{}, err
	}
	if opts.Settled != nil {
		opts.Settled(settled(live))
	}
	return health.Result{Status: health.Healthy}, nil
}

// settled is live as its controller leaves it once healthy.
func settled(live *engine.Resource) *engine.Resource {
	out := *live
	out.Attributes = maps.Clone(live.Attributes)
	out.Attributes["status"] = map[string]any{"availableReplicas": int64(2)}
	return &out
}

// TestWaitRecordsWhatItSawHealthy: the release records each resource as its
// wait last saw it healthy (its status after the apply), with the
// dependencies the apply recorded, in WaitAll and in Wait; a runtime that
// does not pass the object on leaves the record as applied.
func TestWaitRecordsWhatItSawHealthy(t *testing.T) {
	for _, alone := range []bool{false, true} {
		forEachBackend(t, func(t *testing.T, b backend.Backend) {
			m := release.New(b, settlingWaiter{memory.New()}, &runs{})
			ids, nodes := startedConfigMaps(t, b, m, "s", 3)
			// Applied as runs apply them: a batch waited for in a batch, a
			// node alone waited for alone.
			if alone {
				for _, n := range nodes {
					if _, err := m.Apply(ctx, n); err != nil {
						t.Fatal(err)
					}
				}
			} else if _, err := m.Batch(ctx, nodes, nil, nil); err != nil {
				t.Fatal(err)
			}
			applied := map[string]*engine.Resource{}
			for i, n := range nodes {
				applied[ids[i]] = recordOf(t, b, n)
			}
			if alone {
				for _, n := range nodes {
					if _, err := m.Wait(ctx, n, time.Now(), func(health.Result) {}); err != nil {
						t.Fatal(err)
					}
				}
			} else if _, errs, err := m.WaitAll(ctx, nodes, time.Now(), func(int, health.Result) {}); err != nil || errs[0] != nil {
				t.Fatal(err, errs)
			}
			for i, n := range nodes {
				got := recordOf(t, b, n)
				if want := settled(applied[ids[i]]); !reflect.DeepEqual(engine.Normalize(got.Attributes), engine.Normalize(want.Attributes)) {
					t.Errorf("alone=%v: %s recorded as %v, want it as its wait saw it healthy, %v", alone, ids[i], got.Attributes, want.Attributes)
				}
				if !reflect.DeepEqual(got.DependsOn, applied[ids[i]].DependsOn) {
					t.Errorf("alone=%v: %s depends on %v, want %v as applied", alone, ids[i], got.DependsOn, applied[ids[i]].DependsOn)
				}
			}
		})
	}
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		// A runtime that does not say what it saw: the record stays as applied.
		g := newGatedWaiter()
		m, ids, nodes := waitingFor(t, b, g, 1)
		if _, err := m.Apply(ctx, nodes[0]); err != nil {
			t.Fatal(err)
		}
		before := recordOf(t, b, nodes[0])
		go func() { g.gate(ids[0]) <- nil }()
		if _, _, err := m.WaitAll(ctx, nodes, time.Now(), func(int, health.Result) {}); err != nil {
			t.Fatal(err)
		}
		if after := recordOf(t, b, nodes[0]); !reflect.DeepEqual(after, before) {
			t.Errorf("record changed to %v by a wait that saw nothing, want %v", after, before)
		}
	})
}

// recordOf is the resource n's release records for n.
func recordOf(t *testing.T, b backend.Backend, n release.Node) *engine.Resource {
	t.Helper()
	e, ok, err := b.GetStateEntry(ctx, n.Key, n.ID)
	if err != nil || !ok || e.Resource == nil {
		t.Fatalf("state entry of %s: %v, %v, %v", n.ID, e, ok, err)
	}
	return e.Resource
}
