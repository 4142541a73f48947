package s3_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/engine"
)

// TestLayout: objects land at the documented keys, the local backend's paths
// under the prefix.
func TestLayout(t *testing.T) {
	b, f := newFake(t, "team/kumo")
	r := backendtest.Release("shop", "prod", 1)
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatal(err)
	}
	spec := &engine.Spec{Resources: []engine.Resource{backendtest.Resource("v1:Namespace:demo", 1)}}
	hash, err := b.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	id := "apps/v1:Deployment:demo:web"
	res := backendtest.Resource(id, 1)
	if err := b.PutStateEntry(ctx, backend.KeyOf(r), backend.StateEntry{ID: id, Resource: &res}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateWorkspace(ctx, backendtest.Workspace("prod")); err != nil {
		t.Fatal(err)
	}
	if err := b.PutRunLog(ctx, "run-1", "000000", []byte("x")); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"team/kumo/releases/shop/prod/.latest",
		"team/kumo/releases/shop/prod/1.state/" + entryName(id),
		"team/kumo/releases/shop/prod/1.yaml",
		"team/kumo/runs/run-1/000000.log",
		"team/kumo/specs/" + hash + ".yaml",
		"team/kumo/workspaces/prod.yaml",
	}
	if got := f.keys(t); !slices.Equal(got, want) {
		t.Fatalf("keys:\n got  %q\n want %q", got, want)
	}
	if err := b.ClearStateEntries(ctx, backend.KeyOf(r)); err != nil {
		t.Fatal(err)
	}
	if got := f.keys(t); slices.Contains(got, want[1]) || len(got) != len(want)-1 {
		t.Fatalf("keys after clearing the state entries: %q", got)
	}
	// A second backend on another prefix of the same bucket sees none of it.
	other, err := newBackend(f, "other")
	if err != nil {
		t.Fatal(err)
	}
	if list, err := other.ListReleases(ctx, "shop", "prod"); err != nil || len(list) != 0 {
		t.Fatalf("another prefix: %d releases, %v", len(list), err)
	}
	if names, err := other.ListWorkspaces(ctx); err != nil || len(names) != 0 {
		t.Fatalf("another prefix: workspaces %q, %v", names, err)
	}
}

// TestNamesStayInsidePrefix: refused names write nothing at all, and the longest
// names and odd resource IDs stay single key segments under the prefix.
func TestNamesStayInsidePrefix(t *testing.T) {
	b, f := newFake(t, "team/kumo")
	for _, bad := range backendtest.BadNames {
		refused := func(op string, err error) {
			t.Helper()
			if err == nil {
				t.Errorf("%s with %q: accepted", op, bad)
			}
		}
		for _, pw := range [][2]string{{bad, "w"}, {"p", bad}, {bad, bad}} {
			key := backend.ReleaseKey{Project: pw[0], Workspace: pw[1], Revision: 1}
			refused("CreateRelease", b.CreateRelease(ctx, backendtest.Release(pw[0], pw[1], 1)))
			refused("UpdateRelease", b.UpdateRelease(ctx, backendtest.Release(pw[0], pw[1], 1)))
			refused("PutStateEntry", b.PutStateEntry(ctx, key, backend.StateEntry{ID: "x", Deleted: true}))
			refused("ClearStateEntries", b.ClearStateEntries(ctx, key))
		}
		refused("CreateWorkspace", b.CreateWorkspace(ctx, backendtest.Workspace(bad)))
		refused("PutWorkspace", b.PutWorkspace(ctx, backendtest.Workspace(bad)))
		refused("DeleteWorkspace", b.DeleteWorkspace(ctx, bad))
		refused("PutRunLog", b.PutRunLog(ctx, bad, "part", []byte("x")))
		refused("PutRunLog", b.PutRunLog(ctx, "run", bad, []byte("x")))
	}
	if _, err := b.GetSpec(ctx, "../../../etc/passwd"); err == nil {
		t.Error("GetSpec of a path: accepted")
	}
	if keys := f.keys(t); len(keys) != 0 {
		t.Fatalf("refused calls wrote %q", keys)
	}
	long := strings.Repeat("a", backend.MaxNameLength)
	r := backendtest.Release(long, "x..y", 1)
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatal(err)
	}
	id := "../../../../../escape:/x%2F.."
	if err := b.PutStateEntry(ctx, backend.KeyOf(r), backend.StateEntry{ID: id, Deleted: true}); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := b.GetStateEntry(ctx, backend.KeyOf(r), id); err != nil || !ok || e.ID != id {
		t.Fatalf("GetStateEntry(%q): %v %v %v", id, e, ok, err)
	}
	prefix := "team/kumo/releases/" + long + "/x..y/"
	for _, k := range f.keys(t) {
		if spec, ok := strings.CutPrefix(k, "team/kumo/specs/"); ok {
			if hash, ok := strings.CutSuffix(spec, ".yaml"); !ok || len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
				t.Fatalf("key %q is not a spec named by its hash", k)
			}
			continue // the release's spec, stored by content hash
		}
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok || strings.Contains(rest, "..") || strings.Count(rest, "/") > 1 {
			t.Fatalf("key %q is not a plain key under %s", k, prefix)
		}
	}
}

// TestBytesWrittenLinear: recording N resources uploads N entries of about one
// entry's size each, nothing that grows with N.
func TestBytesWrittenLinear(t *testing.T) {
	b, _ := newFake(t, "kumo")
	r := backendtest.Release("p", "w", 1)
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for i := range 100 {
		before := b.BytesWritten()
		res := backendtest.Resource(fmt.Sprintf("v1:ConfigMap:demo:cm-%03d", i), int64(i))
		if err := b.PutStateEntry(ctx, backend.KeyOf(r), backend.StateEntry{ID: res.ID, Resource: &res}); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, b.BytesWritten()-before)
	}
	if first, last := sizes[0], sizes[len(sizes)-1]; last > first*11/10 || first == 0 {
		t.Fatalf("entry 1 wrote %d bytes, entry 100 wrote %d: not constant per entry", first, last)
	}
}

// entryName is the documented name of a state entry: the hex sha256 of the
// resource ID, computed here independently of the backend.
func entryName(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:]) + ".json"
}
