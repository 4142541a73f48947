package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/benchspec"
)

// BenchmarkRevisionBytes: backend bytes per revision at 200, 2,000 and
// 10,000 ConfigMaps (the sizes issue 34 measured) against Helm's release
// Secret for the same objects, without a cluster: the
// state is what an apiserver returns (a random v4 uid, a resourceVersion, a
// creationTimestamp added to each object), written through the Store over the
// local driver as a run writes it. Revisions: an apply, a no-op re-apply, an
// update of every object.
func BenchmarkRevisionBytes(b *testing.B) {
	for _, n := range []int{200, 2000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchRevisionBytes(b, n) })
	}
}

func benchRevisionBytes(b *testing.B, n int) {
	ctx := context.Background()
	for b.Loop() {
		home := b.TempDir()
		be, err := local.New(home)
		if err != nil {
			b.Fatal(err)
		}
		spec := benchspec.ConfigMaps("bench", n, false)
		updated := benchspec.ConfigMaps("bench", n, false)
		for i := range updated.Resources[1:] {
			updated.Resources[i+1].Attributes["data"] = map[string]any{"index": fmt.Sprint(i), "updated": "yes"}
		}
		live := func(s *engine.Spec, rv int) []engine.Resource {
			out := make([]engine.Resource, len(s.Resources))
			for i, r := range s.Resources {
				attrs := maps.Clone(r.Attributes)
				md := maps.Clone(attrs["metadata"].(map[string]any))
				md["uid"], md["resourceVersion"], md["creationTimestamp"] = uid(i), fmt.Sprint(rv+i), "2026-11-26T01:00:00Z"
				attrs["metadata"] = md
				r.Attributes = attrs
				out[i] = r
			}
			return out
		}
		for rev, c := range []struct {
			name  string
			spec  *engine.Spec
			state []engine.Resource
		}{{"apply", spec, live(spec, 1000)}, {"re-apply", spec, nil}, {"update", updated, live(updated, 20000)}} {
			if c.state == nil {
				c.state = live(spec, 1000)
			}
			before, err := storedBytes(be, home)
			if err != nil {
				b.Fatal(err)
			}
			r := &engine.Release{Project: "bench", Workspace: "default", Revision: rev + 1, Operation: engine.OperationApply,
				Phase: engine.PhaseSucceeded, SpecHash: engine.HashSpec(c.spec), Spec: c.spec, State: &engine.State{Resources: c.state},
				CreateTime: time.Now(), ModifyTime: time.Now()}
			putRelease(ctx, b, be, c.spec, r)
			after, err := storedBytes(be, home)
			if err != nil {
				b.Fatal(err)
			}
			helm, err := helmReleaseBytes(ctx, c.spec, rev+1)
			if err != nil {
				b.Fatal(err)
			}
			old, err := oldReleaseBytes(r)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(after-before), c.name+"-bytes")
			b.ReportMetric(float64(old), c.name+"-format1-bytes")
			b.ReportMetric(float64(helm), c.name+"-helm-bytes")
		}
	}
}

// putRelease stores spec and creates r, a release of it.
func putRelease(ctx context.Context, tb testing.TB, be backend.Backend, spec *engine.Spec, r *engine.Release) {
	tb.Helper()
	if _, err := be.PutSpec(ctx, spec); err != nil {
		tb.Fatal(err)
	}
	if err := be.CreateRelease(ctx, r); err != nil {
		tb.Fatal(err)
	}
}

// uids stay the same for the same object across revisions, as they do live.
var uids = map[int]string{}

func uid(i int) string {
	if u, ok := uids[i]; ok {
		return u
	}
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80 // version 4, RFC 4122 variant: 122 random bits
	u := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	uids[i] = u
	return u
}

// TestStoredBytesCountRecordsOnly: a revision's cost is its records', not
// what the driver has set aside to free (state entries cleared at the
// finish, an ended process's trash) nor a write under way.
func TestStoredBytesCountRecordsOnly(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	be, err := local.New(home)
	if err != nil {
		t.Fatal(err)
	}
	spec := benchspec.ConfigMaps("bench", 200, false)
	r := &engine.Release{Project: "bench", Workspace: "default", Revision: 1, Operation: engine.OperationApply,
		Phase: engine.PhaseApplying, SpecHash: engine.HashSpec(spec), CreateTime: time.Now(), ModifyTime: time.Now()}
	putRelease(ctx, t, be, spec, r)
	records, err := storedBytes(be, home)
	if err != nil {
		t.Fatal(err)
	}
	key := backend.KeyOf(r)
	for i := range 20 {
		var entries []backend.StateEntry
		for _, res := range spec.Resources[i*10 : i*10+10] {
			entries = append(entries, backend.StateEntry{ID: res.ID, Resource: &res})
		}
		if err := be.PutStateEntries(ctx, key, entries); err != nil {
			t.Fatal(err)
		}
	}
	if err := be.ClearStateEntries(ctx, key); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "releases", "bench", "default")
	for _, name := range []string{".tmp-clear-left", ".tmp-12345"} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, 4096), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, ".tmp-clear-tree", "gone"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".tmp-clear-tree", "gone", "x.batch.json"), make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	after, err := storedBytes(be, home)
	if err != nil {
		t.Fatal(err)
	}
	if after != records {
		t.Errorf("stored bytes %d after the entries were cleared and trash left, want the records' %d", after, records)
	}
}
