package release_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/release"
)

func tfObject(name, content string) engine.Resource {
	return engine.Resource{ID: "kumoproj:kumotest:kumotest_object:" + name, Type: engine.Terraform,
		Attributes: map[string]any{"content": content, "id": name}}
}

// TestCheckDrift: a check reads the latest succeeded release (not a later
// failed one), reports a changed and a missing resource, stores the report,
// and the next check carries first-seen over and applies ignore rules.
func TestCheckDrift(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rt := newFakeRuntime()
		m := release.New(b, rt, &runs{})
		if _, _, err := m.CheckDrift(ctx, release.DriftInput{Project: "p", Workspace: "w", RunID: "c0", CheckTime: time.Now()}); !errors.Is(err, release.ErrNoRelease) {
			t.Fatalf("check without releases: %v, want ErrNoRelease", err)
		}
		x, y := tfObject("x", "mine"), tfObject("y", "kept")
		info, err := m.Begin(ctx, begin("p", "w", "run-1", putSpec(t, b, x, y)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []engine.Resource{x, y} {
			if _, err := rt.Apply(ctx, &r, runtime.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := m.Record(ctx, info.Key, backend.StateEntry{ID: r.ID, Resource: &r}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		failed, err := m.Begin(ctx, begin("p", "w", "run-2", putSpec(t, b, x)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: failed.Key, Phase: engine.PhaseFailed, Error: "boom"}); err != nil {
			t.Fatal(err)
		}
		changed := tfObject("x", "theirs")
		if _, err := rt.Apply(ctx, &changed, runtime.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		_ = rt.Delete(ctx, &y)

		t1 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
		r1, _, err := m.CheckDrift(ctx, release.DriftInput{Project: "p", Workspace: "w", RunID: "check-1", CheckTime: t1})
		if err != nil {
			t.Fatal(err)
		}
		if r1.Revision != 1 || r1.Counts != (drift.Counts{Resources: 2, Drifted: 1, Missing: 1}) || len(r1.Resources) != 2 {
			t.Fatalf("first check: %+v", r1)
		}
		if f := r1.Resources[0].Fields; len(f) != 1 || f[0].Path != "/content" || f[0].Recorded != "mine" || f[0].Live != "theirs" {
			t.Errorf("drifted fields %+v", f)
		}
		stored, err := b.DriftReport(ctx, "p", "w", "")
		if err != nil || stored.RunID != "check-1" || stored.Counts != r1.Counts {
			t.Fatalf("stored report %+v, %v", stored, err)
		}

		t2 := t1.Add(time.Hour)
		cfg := drift.Config{Ignore: []drift.Rule{{ID: "*:kumotest_object:x", JSONPointers: []string{"/content"}}}}
		r2, _, err := m.CheckDrift(ctx, release.DriftInput{Project: "p", Workspace: "w", RunID: "check-2", CheckTime: t2, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if r2.Counts != (drift.Counts{Resources: 2, InSync: 1, Missing: 1, Ignored: 1}) {
			t.Fatalf("second check counts %+v", r2.Counts)
		}
		for _, r := range r2.Resources {
			switch r.ID {
			case x.ID:
				if r.Status != drift.InSync || len(r.Ignored) != 1 || r.Ignored[0].IgnoredBy != "drift.ignore[0]" {
					t.Errorf("ignored resource %+v", r)
				}
			case y.ID:
				if !r.FirstSeen.Equal(t1) || r.ConsecutiveChecks != 2 {
					t.Errorf("missing since the first check: first seen %v, %d checks", r.FirstSeen, r.ConsecutiveChecks)
				}
			}
		}
		// A retried check writes the same report, counted once.
		again, _, err := m.CheckDrift(ctx, release.DriftInput{Project: "p", Workspace: "w", RunID: "check-2", CheckTime: t2, Config: cfg})
		if err != nil || again.Resources[1].ConsecutiveChecks != 2 {
			t.Errorf("retried check: %+v, %v", again, err)
		}
		if all, _ := b.DriftReports(ctx, "p", "w"); len(all) != 2 {
			t.Errorf("%d reports stored, want 2", len(all))
		}
	})
}
