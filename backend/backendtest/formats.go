package backendtest

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
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

// testFormat2Reads: a release as record format 2 wrote it (its state's
// resources whole in one chunk) still reads, and a revision written after
// it reads too.
func testFormat2Reads(t *testing.T, d *recorder, b backend.Backend) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	r := Release("p", "w", 1)
	hash, err := b.PutSpec(ctx, r.Spec)
	if err != nil {
		t.Fatal(err)
	}
	r.State = &engine.State{Resources: stateOf(3, 1)}
	clear, err := json.Marshal(r.State.Resources)
	if err != nil {
		t.Fatal(err)
	}
	chunk := enc.EncodeAll(clear, nil)
	name, digest := sha256.Sum256(chunk), sha256.Sum256(clear)
	if _, err := d.Write(ctx, "releases/p/w/chunks/"+hex.EncodeToString(name[:]), chunk, backend.Condition{}); err != nil {
		t.Fatal(err)
	}
	head := *r
	head.Spec, head.State = nil, nil
	text, err := json.Marshal(head)
	if err != nil {
		t.Fatal(err)
	}
	var record map[string]any
	if err := json.Unmarshal(text, &record); err != nil {
		t.Fatal(err)
	}
	record["kumoRecord"] = map[string]any{"format": 2, "specRef": hash, "specResources": 1, "hasState": true, "stateResources": 3,
		"state": []any{map[string]any{"key": hex.EncodeToString(name[:]), "resources": 3, "bytes": len(chunk), "digest": hex.EncodeToString(digest[:])}}}
	if text, err = json.Marshal(record); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(ctx, "releases/p/w/1.yaml", enc.EncodeAll(text, nil), backend.Condition{}); err != nil {
		t.Fatal(err)
	}
	got, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatalf("a release of format 2: %v", err)
	}
	requireSameRelease(t, "GetRelease of format 2", got, r)
	next := Release("p", "w", 2)
	next.State = &engine.State{Resources: stateOf(3, 1)}
	if err := b.CreateRelease(ctx, next); err != nil {
		t.Fatal(err)
	}
	if got, err = b.GetRelease(ctx, "p", "w", 2); err != nil {
		t.Fatal(err)
	}
	requireSameRelease(t, "the revision after one of format 2", got, next)
}

// testIdentitySharedAcrossUpdates: a state is kept against its spec and the
// objects' identities apart, so a revision that changes every object but
// keeps their uids writes far less than the first.
func testIdentitySharedAcrossUpdates(t *testing.T, d *recorder, b backend.Backend) {
	s, ok := b.(*backend.Store)
	if !ok {
		t.Skip("not a backend.Store")
	}
	const n = 300
	uids := make([]string, n)
	for i := range uids {
		var u [16]byte
		if _, err := rand.Read(u[:]); err != nil {
			t.Fatal(err)
		}
		uids[i] = hex.EncodeToString(u[:])
	}
	specOf := func(gen int) *engine.Spec {
		spec := &engine.Spec{}
		for i := range n {
			spec.Resources = append(spec.Resources, engine.Resource{ID: fmt.Sprintf("v1:ConfigMap:demo:cm-%04d", i), Type: engine.Kubernetes,
				Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": fmt.Sprintf("cm-%04d", i), "namespace": "demo"},
					"data":     map[string]any{"value": fmt.Sprintf("%d-%d", i, gen)}}})
		}
		return spec
	}
	put := func(rev, gen int) int64 {
		t.Helper()
		spec := specOf(gen)
		r := Release("p", "w", rev)
		r.Spec, r.SpecHash = spec, engine.HashSpec(spec)
		r.State = &engine.State{}
		for i, res := range spec.Resources {
			attrs := maps.Clone(res.Attributes)
			md := maps.Clone(attrs["metadata"].(map[string]any))
			md["uid"], md["resourceVersion"], md["creationTimestamp"] = uids[i], fmt.Sprint(1000*rev+i), "2026-11-26T01:00:00Z"
			attrs["metadata"] = md
			res.Attributes = attrs
			r.State.Resources = append(r.State.Resources, res)
		}
		if _, err := b.PutSpec(ctx, spec); err != nil {
			t.Fatal(err)
		}
		before := s.BytesWritten()
		if err := b.CreateRelease(ctx, r); err != nil {
			t.Fatal(err)
		}
		written := s.BytesWritten() - before
		got, err := b.GetRelease(ctx, "p", "w", rev)
		if err != nil {
			t.Fatal(err)
		}
		requireSameRelease(t, fmt.Sprintf("revision %d", rev), got, r)
		return written
	}
	first := put(1, 1)
	update := put(2, 2)
	if update*3 > first {
		t.Errorf("an update of every object (same uids) wrote %d bytes, the first revision %d; want under a third", update, first)
	}
	t.Logf("%d objects: first revision %d bytes, update of every object %d", n, first, update)
}
