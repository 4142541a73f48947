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
	_, s := localStore(b)
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

// BenchmarkReleaseRead: reading back whole a release of 10,000 ConfigMaps
// (its state rebuilt from patches of its spec), as a run reads the release it
// starts from.
//
//	go test -run '^$' -bench ReleaseRead -benchmem ./backend
func BenchmarkReleaseRead(b *testing.B) {
	ctx := context.Background()
	d, s := localStore(b)
	spec, state := &engine.Spec{}, &engine.State{}
	for i := range 10000 {
		r := configMap(i, 0)
		state.Resources = append(state.Resources, r)
		desired := r
		desired.Attributes = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": r.Attributes["metadata"].(map[string]any)["name"], "namespace": "bench"},
			"data": r.Attributes["data"]}
		spec.Resources = append(spec.Resources, desired)
	}
	hash, err := s.PutSpec(ctx, spec)
	if err != nil {
		b.Fatal(err)
	}
	r := &engine.Release{Project: "p", Workspace: "w", Revision: 1, Operation: engine.OperationApply, Phase: engine.PhaseApplying, SpecHash: hash}
	if err := s.CreateRelease(ctx, r); err != nil {
		b.Fatal(err)
	}
	r.Phase, r.Spec, r.State = engine.PhaseSucceeded, spec, state
	if err := s.UpdateRelease(ctx, r); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		got, err := backend.NewStore(d).GetRelease(ctx, "p", "w", 1)
		if err != nil {
			b.Fatal(err)
		}
		if len(got.State.Resources) != 10000 {
			b.Fatalf("%d resources", len(got.State.Resources))
		}
	}
}

// localStore is a store on a local driver in a directory of b's.
func localStore(b *testing.B) (backend.Driver, *backend.Store) {
	d, err := local.NewDriver(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return d, backend.NewStore(d)
}
