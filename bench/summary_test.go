package main

import (
	"context"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/benchspec"
	"github.com/kumoproj/kumo/runspec"
)

// TestSummariesAt10000 applies and destroys 10,000 ConfigMaps (the in-memory
// runtime, the embedded Temporal server) and reads how each ended with no
// worker left to answer a query: the counts and every resource's outcome come
// from the run's result (Result.Outcome), never from asking the ended run,
// which replays its whole history for each page (about 40 s for the pages of
// 10,000 resources here, past `kumo run show`'s 10 s).
func TestSummariesAt10000(t *testing.T) {
	if testing.Short() {
		t.Skip("applies and destroys 10,000 resources")
	}
	const n = 10000
	ctx := context.Background()
	k, err := startKumo(ctx, t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer k.close()
	spec := benchspec.ConfigMaps("bench", n, false)
	_, apply, err := k.run(ctx, "bench", spec, runspec.RuntimeSettings{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, destroy, err := k.run(ctx, "bench", nil, runspec.RuntimeSettings{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// No worker from here on: nobody answers a query.
	k.w.Stop()
	k.w = nil
	for _, c := range []struct {
		name   string
		id     string
		action engine.Action
		done   func(runspec.ChangeCounts) int
	}{
		{"apply", apply.RunID, engine.Create, func(c runspec.ChangeCounts) int { return c.Create }},
		{"destroy", destroy.RunID, engine.Delete, func(c runspec.ChangeCounts) int { return c.Delete }},
	} {
		run, _, err := k.c.OpenRun(ctx, "bench", c.id)
		if err != nil {
			t.Fatal(err)
		}
		res, err := run.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		o := res.Outcome
		if o == nil {
			t.Fatalf("%s: the result has no outcome", c.name)
		}
		if c.done(o.Done) != n+1 || o.Total != n+1 || o.Failed != 0 || o.NotRun != 0 {
			t.Errorf("%s: outcome %+v, want %d resources %sd", c.name, o, n+1, c.action)
		}
		t.Logf("%s: %d resources' outcomes packed in %d bytes", c.name, o.Total, len(o.Nodes))
		began := time.Now()
		d, err := k.c.ShowRun(ctx, "bench", c.id)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: run show took %s", c.name, time.Since(began).Round(time.Millisecond))
		if d.ProgressError != "" || len(d.Resources) != n+1 {
			t.Fatalf("%s: run show: %d resources, progress error %q", c.name, len(d.Resources), d.ProgressError)
		}
		for _, r := range d.Resources {
			if r.Action != c.action || r.Result != runspec.NodeSucceeded || r.Started.IsZero() {
				t.Fatalf("%s: run show says %+v", c.name, r)
			}
		}
		if d.People == nil || d.People.StartedBy == nil {
			t.Errorf("%s: run show names nobody who started the run: %+v", c.name, d.People)
		}
	}
}
