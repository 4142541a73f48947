package backendtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// The record formats, checked over every driver: records written before
// compression (format 1: plain YAML or JSON, a release holding its spec and
// state inline) still read and are rewritten compressed; a release's state
// shares what did not change with the previous revision; a chunk altered in
// storage is refused, named.

// zstdMagic starts every compressed record.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// stateOf returns n resources, the k-th with value v+k.
func stateOf(n int, v int64) []engine.Resource {
	rs := make([]engine.Resource, n)
	for i := range rs {
		rs[i] = Resource(fmt.Sprintf("apps/v1:Deployment:demo:web-%05d", i), v+int64(i))
	}
	return rs
}

func testOldFormatsRead(t *testing.T, d *recorder, b backend.Backend) {
	// As kumo wrote them before: a release of format 1, its spec, a batch.
	old := Release("p", "w", 1)
	old.State = &engine.State{Resources: stateOf(3, 1)}
	mustWrite := func(key string, v any, asYAML bool) {
		t.Helper()
		data, err := json.Marshal(v)
		if err == nil && asYAML {
			data, err = yaml.JSONToYAML(data)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Write(ctx, key, data, backend.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite("releases/p/w/1.yaml", old, true)
	hash := engine.HashSpec(old.Spec)
	mustWrite("specs/"+hash+".yaml", old.Spec, true)
	batched := Resource("v1:ConfigMap:demo:batched", 5)
	mustWrite("releases/p/w/1.state/"+strings.Repeat("0", 64)+".batch.json",
		map[string]any{"seq": 1, "entries": []backend.StateEntry{{ID: batched.ID, Resource: &batched}}}, false)

	got, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatalf("a release of format 1: %v", err)
	}
	requireSameRelease(t, "GetRelease of format 1", got, old)
	head, err := b.LatestReleaseHead(ctx, "p", "w")
	if err != nil || head.Revision != 1 || head.Resources != 3 {
		t.Fatalf("LatestReleaseHead of format 1: %+v, %v", head, err)
	}
	spec, err := b.GetSpec(ctx, hash)
	if err != nil || !reflect.DeepEqual(spec, old.Spec) {
		t.Fatalf("GetSpec of format 1: %v, %v", spec, err)
	}
	entries, err := b.ListStateEntries(ctx, backend.KeyOf(old))
	if e, ok := entries[batched.ID]; err != nil || !ok || !reflect.DeepEqual(*e.Resource, batched) {
		t.Fatalf("ListStateEntries of an old batch: %v, %v", entries, err)
	}

	// Written again, it is compressed, and reads back the same.
	got.Phase = engine.PhaseSucceeded
	if err := b.UpdateRelease(ctx, got); err != nil {
		t.Fatal(err)
	}
	data, _, err := d.Read(ctx, "releases/p/w/1.yaml")
	if err != nil || !bytes.HasPrefix(data, zstdMagic) {
		t.Fatalf("release file after an update: not compressed (%v)", err)
	}
	again, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	old.Phase = engine.PhaseSucceeded
	requireSameRelease(t, "GetRelease after rewriting", again, old)
}

// requireSameRelease compares two releases but for Version.
func requireSameRelease(t *testing.T, what string, got, want *engine.Release) {
	t.Helper()
	g, w := *got, *want
	g.Version, w.Version = "", ""
	if !reflect.DeepEqual(g, w) {
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		t.Fatalf("%s: release differs:\n got  %s\n want %s", what, gj, wj)
	}
}

// testNoOpRevisionIsSmall: a revision whose state and spec equal the previous
// one's writes its release file only; one changed resource rewrites one
// chunk, not the state.
func testNoOpRevisionIsSmall(t *testing.T, d *recorder, b backend.Backend) {
	if testing.Short() {
		t.Skip("writes 6,000 resources")
	}
	s, ok := b.(*backend.Store)
	if !ok {
		t.Skip("not a backend.Store")
	}
	const n = 2000
	spec := &engine.Spec{Resources: stateOf(n, 0)}
	put := func(rev int, state []engine.Resource) int64 {
		t.Helper()
		before := s.BytesWritten()
		r := Release("p", "w", rev)
		r.Spec, r.SpecHash = spec, engine.HashSpec(spec)
		r.State = &engine.State{Resources: state}
		if err := b.CreateRelease(ctx, r); err != nil {
			t.Fatal(err)
		}
		got, err := b.GetRelease(ctx, "p", "w", rev)
		if err != nil {
			t.Fatal(err)
		}
		requireSameRelease(t, fmt.Sprintf("revision %d", rev), got, r)
		return s.BytesWritten() - before
	}
	chunks := func() int {
		t.Helper()
		ents, err := d.List(ctx, "releases/p/w/chunks")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	state := stateOf(n, 1)
	full := put(1, state)
	before := chunks()
	noop := put(2, state)
	// The release file only: no chunk, no spec. (These resources compress
	// far better than real ones; BenchmarkRevisionBytes measures the ratio
	// on ConfigMaps.)
	if after := chunks(); after != before || noop*20 > full {
		t.Errorf("a no-op revision wrote %d bytes and %d chunks, the first %d bytes", noop, after-before, full)
	}
	changed := stateOf(n, 1)
	changed[n/2] = Resource(changed[n/2].ID, -1)
	before = chunks()
	one := put(3, changed)
	if added := chunks() - before; added != 1 || one >= full {
		t.Errorf("a revision changing one resource of %d wrote %d chunks, %d bytes (the first %d)", n, added, one, full)
	}
	t.Logf("%d resources: first revision %d bytes, no-op %d, one changed %d", n, full, noop, one)
}

// testAlteredChunkRefused: a state chunk whose bytes changed in storage is
// refused, naming it, rather than read as the release's state.
func testAlteredChunkRefused(t *testing.T, d *recorder, b backend.Backend) {
	r := Release("p", "w", 1)
	r.State = &engine.State{Resources: stateOf(3, 1)}
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatal(err)
	}
	ents, err := d.List(ctx, "releases/p/w/chunks")
	if err != nil || len(ents) != 1 {
		t.Fatalf("chunks of a 3-resource state: %v, %v", ents, err)
	}
	key := "releases/p/w/chunks/" + ents[0].Name
	data, _, err := d.Read(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	data = append(bytes.Clone(data), 0)
	if _, err := d.Write(ctx, key, data, backend.Condition{}); err != nil {
		t.Fatal(err)
	}
	_, err = b.GetRelease(ctx, "p", "w", 1)
	if err == nil || !strings.Contains(err.Error(), ents[0].Name) || !strings.Contains(err.Error(), "p/w#1") {
		t.Fatalf("GetRelease over an altered chunk: %v; want an error naming the release and the chunk", err)
	}
}

// testSummariesReadReleaseFilesOnly: ListReleaseSummaries reads each release
// file and nothing of its spec or state, and says what ListReleases says
// but for them.
func testSummariesReadReleaseFilesOnly(t *testing.T, d *recorder, b backend.Backend) {
	for rev := 1; rev <= 3; rev++ {
		r := Release("p", "w", rev)
		r.State = &engine.State{Resources: stateOf(rev*2, int64(rev))}
		if rev == 2 {
			r.State = nil
		}
		if err := b.CreateRelease(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// Revision 4 of format 1, written before compact records.
	old := Release("p", "w", 4)
	old.State = &engine.State{Resources: stateOf(5, 4)}
	data, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(ctx, "releases/p/w/4.yaml", data, backend.Condition{}); err != nil {
		t.Fatal(err)
	}
	full, err := b.ListReleases(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	stop := d.logReads()
	sums, err := b.ListReleaseSummaries(ctx, "p", "w")
	reads := stop()
	if err != nil || len(sums) != 4 {
		t.Fatalf("ListReleaseSummaries: %d, %v", len(sums), err)
	}
	for _, k := range reads {
		if strings.HasPrefix(k, "specs/") || strings.Contains(k, "/chunks/") || strings.Contains(k, ".state/") {
			t.Errorf("ListReleaseSummaries read %s", k)
		}
	}
	for i, sum := range sums {
		want := *full[i]
		if want.Spec == nil || sum.SpecResources != len(want.Spec.Resources) || sum.HasState != (want.State != nil) ||
			want.State != nil && sum.StateResources != len(want.State.Resources) || sum.Stored <= 0 {
			t.Errorf("summary of revision %d: %+v, want spec %d resources, state %v", i+1, sum, len(want.Spec.Resources), want.State)
		}
		want.Spec, want.State = nil, nil
		requireSameRelease(t, fmt.Sprintf("summary of revision %d", i+1), sum.Release, &want)
	}
}
