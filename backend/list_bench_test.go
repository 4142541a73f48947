package backend_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
)

// BenchmarkListReleases: release list over 100 revisions of 10,000
// resources each (each revision changing one), on the local driver. It
// reports the time of one ListReleaseSummaries (what release list reads now)
// and the bytes it read, against what the whole releases hold as record
// format 1 (what ListReleases read before, every release file whole) and
// the time to decode one such file.
func BenchmarkListReleases(b *testing.B) {
	const n, revs = 10000, 100
	ctx := context.Background()
	ld, err := local.NewDriver(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	d := &byteCounter{Driver: ld}
	s := backend.NewStore(d)
	spec := &engine.Spec{}
	for i := range n {
		spec.Resources = append(spec.Resources, configMap(i, 0))
	}
	state := engine.State{Resources: append([]engine.Resource(nil), spec.Resources...)}
	var last *engine.Release
	for rev := 1; rev <= revs; rev++ {
		state.Resources[rev%n] = configMap(rev%n, rev)
		r := &engine.Release{Project: "p", Workspace: "w", Revision: rev, Operation: engine.OperationApply, Phase: engine.PhaseSucceeded,
			SpecHash: engine.HashSpec(spec), Spec: spec, State: &engine.State{Resources: append([]engine.Resource(nil), state.Resources...)}}
		if err := s.CreateRelease(ctx, r); err != nil {
			b.Fatal(err)
		}
		last = r
	}
	var stored int64
	d.read.Store(0)
	for b.Loop() {
		sums, err := s.ListReleaseSummaries(ctx, "p", "w")
		if err != nil || len(sums) != revs || sums[revs-1].StateResources != n {
			b.Fatalf("summaries: %d, %v", len(sums), err)
		}
		stored = 0
		for _, sum := range sums {
			stored += sum.Stored
		}
	}
	read := d.read.Load()
	old, err := backend.RecordSize(last)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(read)/float64(b.N), "bytes-read/list")
	b.ReportMetric(float64(old)*revs, "format1-bytes/list")
	b.ReportMetric(float64(stored), "stored-bytes")
	start := time.Now()
	if _, err := s.GetRelease(ctx, "p", "w", revs); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/whole-release")
}

func configMap(i, v int) engine.Resource {
	name := fmt.Sprintf("cm-%05d", i)
	return engine.Resource{ID: "v1:ConfigMap:bench:" + name, Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "bench", "uid": fmt.Sprintf("%032x", uint64(i)*2654435761), "resourceVersion": fmt.Sprint(1000 + v)},
		"data":     map[string]any{"index": fmt.Sprint(i), "v": fmt.Sprint(v)},
	}}
}

// byteCounter counts the bytes read through it.
type byteCounter struct {
	backend.Driver
	read atomic.Int64
}

func (c *byteCounter) Read(ctx context.Context, key string) ([]byte, string, error) {
	data, v, err := c.Driver.Read(ctx, key)
	c.read.Add(int64(len(data)))
	return data, v, err
}
