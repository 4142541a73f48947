package backend_test

import (
	"context"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
)

// BenchmarkReleaseWrites: what one run of 200 ConfigMaps writes of its
// release on the local driver, in a run's order: its spec, the release
// created, its phase set, and its finish with the whole state.
//
//	go test -run '^$' -bench ReleaseWrites -cpuprofile cpu.out ./backend
func BenchmarkReleaseWrites(b *testing.B) {
	ctx := context.Background()
	d, err := local.NewDriver(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s := backend.NewStore(d)
	spec := &engine.Spec{}
	for i := range 200 {
		spec.Resources = append(spec.Resources, configMap(i, 0))
	}
	state := &engine.State{Resources: spec.Resources}
	rev := 0
	for b.Loop() {
		rev++
		hash, err := s.PutSpec(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		r := &engine.Release{Project: "p", Workspace: "w", Revision: rev, Operation: engine.OperationApply, Phase: engine.PhasePreviewing, SpecHash: hash}
		if err := s.CreateRelease(ctx, r); err != nil {
			b.Fatal(err)
		}
		got, err := s.GetRelease(ctx, "p", "w", rev)
		if err != nil {
			b.Fatal(err)
		}
		got.Phase = engine.PhaseApplying
		if err := s.UpdateRelease(ctx, got); err != nil {
			b.Fatal(err)
		}
		got.Phase, got.Spec, got.State = engine.PhaseSucceeded, spec, state
		if err := s.UpdateRelease(ctx, got); err != nil {
			b.Fatal(err)
		}
	}
}
