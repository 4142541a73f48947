package local_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
)

// testdata/home was written by the local backend before it became a driver under
// backend.Store, by the calls writeHome makes.

// writeHome makes the calls that wrote testdata/home.
func writeHome(t *testing.T, b backend.Backend) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for rev := 1; rev <= 3; rev++ {
		r := backendtest.Release("shop", "prod", rev)
		must(b.CreateRelease(ctx, r))
		if rev < 3 {
			r.Phase = engine.PhaseSucceeded
			must(b.UpdateRelease(ctx, r))
		}
	}
	key := backend.ReleaseKey{Project: "shop", Workspace: "prod", Revision: 3}
	res := backendtest.Resource("apps/v1:Deployment:demo:web", 3)
	must(b.PutStateEntry(ctx, key, backend.StateEntry{ID: res.ID, Resource: &res}))
	must(b.PutStateEntry(ctx, key, backend.StateEntry{ID: "v1:Namespace:old", Deleted: true}))
	_, err := b.PutSpec(ctx, homeSpec())
	must(err)
	must(b.CreateWorkspace(ctx, backendtest.Workspace("prod")))
	must(b.PutRunLog(ctx, "run-1", "000001", []byte("second\n")))
	must(b.PutRunLog(ctx, "run-1", "000000", []byte("first\n")))
}

func homeSpec() *engine.Spec {
	return &engine.Spec{Resources: []engine.Resource{backendtest.Resource("v1:Namespace:demo", 1)}}
}

// files maps every regular file under root to its bytes.
func files(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSameBytesAsBefore: the same calls write the same files with the same bytes
// as before, except release files and specs, which are compressed now (record
// format 2: a release names its spec by hash and its state by chunks) and read
// back as the old ones did. The new files are the latest-revision hint and the
// specs the releases name.
func TestSameBytesAsBefore(t *testing.T) {
	b := newLocal(t)
	writeHome(t, b)
	before, after := files(t, "testdata/home"), files(t, b.Root())
	recompressed := func(name string) bool {
		return strings.HasPrefix(name, "specs/") || strings.HasPrefix(name, "releases/") && strings.HasSuffix(name, ".yaml") && !strings.Contains(name, ".state/")
	}
	for name, data := range before {
		if name == "releases/shop/prod/.lock" {
			continue // taken by updates; its content is nothing
		}
		got, ok := after[name]
		switch {
		case !ok:
			t.Errorf("%s: not written now", name)
		case recompressed(name):
			if !bytes.HasPrefix(got, zstdMagic) {
				t.Errorf("%s: not compressed", name)
			}
		case string(got) != string(data):
			t.Errorf("%s: written differently now", name)
		}
	}
	var added []string
	for name := range after {
		if _, ok := before[name]; !ok && !strings.HasPrefix(name, "specs/") {
			added = append(added, name)
		}
	}
	slices.Sort(added)
	if want := []string{"releases/shop/prod/.latest"}; !slices.Equal(added, want) {
		t.Errorf("new files %q, want %q", added, want)
	}
	old, err := local.New("testdata/home")
	if err != nil {
		t.Fatal(err)
	}
	oldList, err := old.ListReleases(ctx, "shop", "prod")
	if err != nil {
		t.Fatal(err)
	}
	newList, err := b.ListReleases(ctx, "shop", "prod")
	if err != nil {
		t.Fatal(err)
	}
	for i := range oldList {
		oldList[i].Version, newList[i].Version = "", ""
	}
	if !reflect.DeepEqual(oldList, newList) {
		t.Errorf("the releases read back differently from the old files:\n old %+v\n new %+v", oldList, newList)
	}
	hash := engine.HashSpec(homeSpec())
	oldSpec, err1 := old.GetSpec(ctx, hash)
	newSpec, err2 := b.GetSpec(ctx, hash)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(oldSpec, newSpec) {
		t.Errorf("the spec reads back differently: %v, %v", err1, err2)
	}
}

// TestReadsExistingHome: a home written before reads back whole, and writing goes
// on in it.
func TestReadsExistingHome(t *testing.T) {
	root := t.TempDir()
	for name, data := range files(t, "testdata/home") {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	list, err := b.ListReleases(ctx, "shop", "prod")
	if err != nil || len(list) != 3 {
		t.Fatalf("ListReleases: %d, %v", len(list), err)
	}
	for i, r := range list {
		want := backendtest.Release("shop", "prod", i+1)
		if i < 2 {
			want.Phase = engine.PhaseSucceeded
		}
		want.Version = r.Version
		if d := backendtest.EqualReleases(r, want); d != "" {
			t.Fatalf("revision %d: %s", i+1, d)
		}
	}
	latest, err := b.LatestRelease(ctx, "shop", "prod")
	if err != nil || latest.Revision != 3 {
		t.Fatalf("LatestRelease: %v, %v", latest, err)
	}
	key := backend.KeyOf(latest)
	entries, err := b.ListStateEntries(ctx, key)
	if err != nil || len(entries) != 2 || !entries["v1:Namespace:old"].Deleted || entries["apps/v1:Deployment:demo:web"].Resource == nil {
		t.Fatalf("ListStateEntries: %v, %v", entries, err)
	}
	res := backendtest.Resource("apps/v1:Deployment:demo:web", 3)
	if !reflect.DeepEqual(*entries[res.ID].Resource, res) {
		t.Fatalf("state entry %s differs", res.ID)
	}
	spec, err := b.GetSpec(ctx, engine.HashSpec(homeSpec()))
	if err != nil || !reflect.DeepEqual(spec, homeSpec()) {
		t.Fatalf("GetSpec: %v", err)
	}
	ws, err := b.GetWorkspace(ctx, "prod")
	if err != nil || !reflect.DeepEqual(ws, backendtest.Workspace("prod")) {
		t.Fatalf("GetWorkspace: %v", err)
	}
	if names, err := b.ListWorkspaces(ctx); err != nil || !slices.Equal(names, []string{"prod"}) {
		t.Fatalf("ListWorkspaces: %q, %v", names, err)
	}
	if projects, err := b.ListProjects(ctx, "prod"); err != nil || !slices.Equal(projects, []string{"shop"}) {
		t.Fatalf("ListProjects: %q, %v", projects, err)
	}
	if log, err := b.RunLog(ctx, "run-1"); err != nil || string(log) != "first\nsecond\n" {
		t.Fatalf("RunLog: %q, %v", log, err)
	}
	latest.Phase = engine.PhaseSucceeded
	if err := b.UpdateRelease(ctx, latest); err != nil {
		t.Fatalf("UpdateRelease of a release written before: %v", err)
	}
	if err := b.CreateRelease(ctx, backendtest.Release("shop", "prod", 4)); err != nil {
		t.Fatalf("CreateRelease after the releases written before: %v", err)
	}
	if err := b.CreateRelease(ctx, backendtest.Release("shop", "prod", 6)); err == nil || !strings.Contains(err.Error(), "latest revision of shop/prod is 4") {
		t.Fatalf("a gap: %v", err)
	}
}
