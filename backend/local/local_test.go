package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
)

func newLocal(t *testing.T) *local.Backend {
	t.Helper()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConformance(t *testing.T) {
	backendtest.RunDriver(t, func(t *testing.T) backend.Driver {
		d, err := local.NewDriver(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

var ctx = context.Background()

func TestNewRejectsEmptyRoot(t *testing.T) {
	if _, err := local.New(""); err == nil {
		t.Fatal("New(\"\"): no error")
	}
	root := filepath.Join(t.TempDir(), "a", "b")
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() || b.Root() != root {
		t.Fatalf("root %s not created: %v (Root()=%s)", root, err, b.Root())
	}
}

// TestLayout checks that files land at the documented paths.
func TestLayout(t *testing.T) {
	b := newLocal(t)
	root := b.Root()
	r := backendtest.Release("shop", "prod", 1)
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatal(err)
	}
	relPath := filepath.Join(root, "releases", "shop", "prod", "1.yaml")
	data, err := os.ReadFile(relPath)
	if err != nil {
		t.Fatalf("release file: %v", err)
	}
	// A release file is a zstd frame of JSON: the release, its spec named by
	// hash and its state by chunks (backend/store_chunks.go).
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	text, err := dec.DecodeAll(data, nil)
	if err != nil {
		t.Fatalf("release file is not zstd: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(text, &doc); err != nil {
		t.Fatalf("release file is not JSON: %v", err)
	}
	for _, k := range []string{"project", "workspace", "stack", "revision", "operation", "phase", "specHash", "kumoRecord", "createTime", "modifyTime", "workflowID", "runID"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("release file has no %q field:\n%s", k, data)
		}
	}
	if fi, err := os.Stat(relPath); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("release file mode %v, want 0600", fi.Mode().Perm())
	}

	spec := &engine.Spec{Resources: []engine.Resource{backendtest.Resource("v1:Namespace:demo", 1)}}
	hash, err := b.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := engine.HashSpec(spec); hash != want {
		t.Fatalf("PutSpec hash %s, want engine.HashSpec %s", hash, want)
	}
	specFile := filepath.Join(root, "specs", hash+".yaml")
	if _, err := os.Stat(specFile); err != nil {
		t.Fatalf("spec file: %v", err)
	}
	// A second put of the same spec does not rewrite the file.
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(specFile, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutSpec(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(specFile); err != nil || !fi.ModTime().Equal(old) {
		t.Fatalf("spec file rewritten by an idempotent put: %v", err)
	}

	key := backend.ReleaseKey{Project: "shop", Workspace: "prod", Revision: 1}
	id := "apps/v1:Deployment:demo:web"
	res := backendtest.Resource(id, 1)
	if err := b.PutStateEntry(ctx, key, backend.StateEntry{ID: id, Resource: &res}); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(root, "releases", "shop", "prod", "1.state")
	ents, err := os.ReadDir(stateDir)
	if err != nil {
		t.Fatalf("state dir: %v", err)
	}
	if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".json") || strings.ContainsAny(ents[0].Name(), "/:") {
		t.Fatalf("state dir holds %v, want one .json file with a safe name", names(ents))
	}
	data, err = os.ReadFile(filepath.Join(stateDir, ents[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	var e backend.StateEntry
	if err := json.Unmarshal(data, &e); err != nil || e.ID != id {
		t.Fatalf("state file holds ID %q (%v), want %q", e.ID, err, id)
	}

	if err := b.ClearStateEntries(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Fatalf("state dir after clear: %v", err)
	}
	b.Wait()
	assertNoTemps(t, root)
}

func names(ents []os.DirEntry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// assertNoTemps fails if any temporary file is left under root.
func assertNoTemps(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCrashLeftoversIgnored: files a killed writer leaves behind (temp files, half
// written), and foreign names, are not releases or entries.
func TestCrashLeftoversIgnored(t *testing.T) {
	b := newLocal(t)
	for rev := 1; rev <= 2; rev++ {
		if err := b.CreateRelease(ctx, backendtest.Release("p", "w", rev)); err != nil {
			t.Fatal(err)
		}
	}
	key := backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 2}
	if err := b.PutStateEntry(ctx, key, backend.StateEntry{ID: "v1:Namespace:a", Deleted: true}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(b.Root(), "releases", "p", "w")
	for _, name := range []string{".tmp-123456", ".tmp-999", "3.yaml.partial", "03.yaml", "0.yaml", "-1.yaml", "x.yaml", "99999999999999999999999.yaml", ".lock"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("revision: 3\nproject: p\nworkspace: w\nhalf writ"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "7.yaml"), 0o700); err != nil { // a directory, not a release
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "2.state", ".tmp-42"), []byte(`{"id":"v1:Namespace:ghost"`), 0o600); err != nil {
		t.Fatal(err)
	}

	list, err := b.ListReleases(ctx, "p", "w")
	if err != nil {
		t.Fatalf("ListReleases: %v", err)
	}
	if len(list) != 2 || list[0].Revision != 1 || list[1].Revision != 2 {
		t.Fatalf("ListReleases: %d releases, want revisions 1 and 2", len(list))
	}
	latest, err := b.LatestRelease(ctx, "p", "w")
	if err != nil || latest.Revision != 2 {
		t.Fatalf("LatestRelease: %v, %v; want revision 2", latest, err)
	}
	entries, err := b.ListStateEntries(ctx, key)
	if err != nil || len(entries) != 1 {
		t.Fatalf("ListStateEntries: %v, %v; want only v1:Namespace:a", entries, err)
	}
	// Writing goes on normally next to the leftovers.
	r3 := backendtest.Release("p", "w", 3)
	if err := b.CreateRelease(ctx, r3); err != nil {
		t.Fatalf("CreateRelease 3: %v", err)
	}
	if err := b.UpdateRelease(ctx, r3); err != nil {
		t.Fatalf("UpdateRelease 3: %v", err)
	}
}

// TestLatestReadsOnlyTheLatestFile: a damaged old release does not stop
// LatestRelease (it reads one file), while ListReleases reports it by path.
func TestLatestReadsOnlyTheLatestFile(t *testing.T) {
	b := newLocal(t)
	for rev := 1; rev <= 10; rev++ {
		if err := b.CreateRelease(ctx, backendtest.Release("p", "w", rev)); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(b.Root(), "releases", "p", "w", "9.yaml")
	if err := os.WriteFile(bad, []byte("{{{ not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	latest, err := b.LatestRelease(ctx, "p", "w")
	if err != nil || latest.Revision != 10 {
		t.Fatalf("LatestRelease: %v, %v; want revision 10", latest, err)
	}
	_, err = b.ListReleases(ctx, "p", "w")
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("ListReleases with a damaged file: %v; want an error naming %s", err, bad)
	}
	// A file holding another revision than its name says is refused, naming both.
	data, err := os.ReadFile(filepath.Join(b.Root(), "releases", "p", "w", "1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.Root(), "releases", "p", "w", "2.yaml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetRelease(ctx, "p", "w", 2); err == nil || !strings.Contains(err.Error(), "2.yaml") {
		t.Fatalf("GetRelease of a misplaced file: %v", err)
	}
}

// TestNamesStayInsideRoot: refused names (releases, state, workspaces, run logs)
// create nothing anywhere, in or out of root.
func TestNamesStayInsideRoot(t *testing.T) {
	outer := t.TempDir()
	root := filepath.Join(outer, "home", "kumo")
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, outer)
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
			refused("PutStateEntry", b.PutStateEntry(ctx, key, backend.StateEntry{ID: "../../../../x", Deleted: true}))
			refused("ClearStateEntries", b.ClearStateEntries(ctx, key))
			_, err := b.ListReleases(ctx, pw[0], pw[1])
			refused("ListReleases", err)
			_, err = b.LatestRelease(ctx, pw[0], pw[1])
			refused("LatestRelease", err)
		}
		refused("CreateWorkspace", b.CreateWorkspace(ctx, backendtest.Workspace(bad)))
		refused("PutWorkspace", b.PutWorkspace(ctx, backendtest.Workspace(bad)))
		refused("DeleteWorkspace", b.DeleteWorkspace(ctx, bad))
		refused("PutRunLog", b.PutRunLog(ctx, bad, "part", []byte("x")))
		refused("PutRunLog", b.PutRunLog(ctx, "run", bad, []byte("x")))
		_, err := b.ListProjects(ctx, bad)
		refused("ListProjects", err)
	}
	if _, err := b.GetSpec(ctx, "../../../../etc/passwd"); err == nil {
		t.Error("GetSpec of a path: accepted")
	}
	if after := snapshot(t, outer); !slices.Equal(before, after) {
		t.Fatalf("refused calls changed the tree:\nbefore %v\nafter  %v", before, after)
	}
	// A resource ID with path characters stays a file name inside the state dir.
	if err := b.CreateRelease(ctx, backendtest.Release("p", "w", 1)); err != nil {
		t.Fatal(err)
	}
	key := backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 1}
	id := "../../../../../escape:/x"
	if err := b.PutStateEntry(ctx, key, backend.StateEntry{ID: id, Deleted: true}); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := b.GetStateEntry(ctx, key, id); err != nil || !ok || e.ID != id {
		t.Fatalf("GetStateEntry(%q): %v %v %v", id, e, ok, err)
	}
	for _, p := range snapshot(t, outer) {
		if !strings.HasPrefix(p, filepath.Join("home", "kumo")) && p != "home" {
			t.Fatalf("%s created outside the root", p)
		}
	}
}

func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if rel != "." {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStateEntryWritesAreLinear: each entry is its own file of about its own size,
// so recording N resources writes bytes linear in N.
func TestStateEntryWritesAreLinear(t *testing.T) {
	b := newLocal(t)
	if err := b.CreateRelease(ctx, backendtest.Release("p", "w", 1)); err != nil {
		t.Fatal(err)
	}
	key := backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 1}
	dir := filepath.Join(b.Root(), "releases", "p", "w", "1.state")
	var sizes []int64
	for i := range 50 {
		r := backendtest.Resource(fmt.Sprintf("v1:ConfigMap:demo:cm-%03d", i), int64(i))
		if err := b.PutStateEntry(ctx, key, backend.StateEntry{ID: r.ID, Resource: &r}); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != i+1 {
			t.Fatalf("after %d puts: %d files", i+1, len(ents))
		}
		var total int64
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			total += fi.Size()
		}
		sizes = append(sizes, total)
	}
	per := sizes[0]
	if last := sizes[len(sizes)-1]; last > per*int64(len(sizes))*11/10 {
		t.Fatalf("50 entries take %d bytes, one takes %d: not linear", last, per)
	}
}

// TestConcurrentUpdates: racing read-modify-write updaters never leave a torn or
// mixed file; the losers of a race get ErrConflict and retry.
func TestConcurrentUpdates(t *testing.T) {
	b := newLocal(t)
	if err := b.CreateRelease(ctx, backendtest.Release("p", "w", 1)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := backendtest.Release("p", "w", 1)
			r.RunID = fmt.Sprintf("run-%d", i)
			r.Error = strings.Repeat(fmt.Sprintf("%d", i%10), 10000+i)
			for done := 0; done < 5; {
				cur, err := b.GetRelease(ctx, "p", "w", 1)
				if err != nil {
					errs[i] = err
					return
				}
				r.Version = cur.Version
				switch err := b.UpdateRelease(ctx, r); {
				case errors.Is(err, backend.ErrConflict):
				case err != nil:
					errs[i] = err
					return
				default:
					done++
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("updater %d: %v", i, err)
		}
	}
	got, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	var i int
	if _, err := fmt.Sscanf(got.RunID, "run-%d", &i); err != nil || got.Error != strings.Repeat(fmt.Sprintf("%d", i%10), 10000+i) {
		t.Fatalf("final release mixes updates: run %q, error of %d bytes", got.RunID, len(got.Error))
	}
	b.Wait()
	assertNoTemps(t, b.Root())
}

const helperEnv = "KUMO_LOCAL_TEST_HELPER_ROOT"

// TestCrossProcessCreate: several processes race to append revisions to one
// workspace; revisions stay gapless and each is created exactly once.
func TestCrossProcessCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := t.TempDir()
	const procs, each = 4, 10
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*strings.Builder, procs)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+root, fmt.Sprintf("KUMO_LOCAL_TEST_HELPER_ID=%d", i), fmt.Sprintf("KUMO_LOCAL_TEST_HELPER_N=%d", each))
		outs[i] = new(strings.Builder)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i])
		}
	}
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	list, err := b.ListReleases(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != procs*each {
		t.Fatalf("%d releases, want %d", len(list), procs*each)
	}
	perProc := map[string]int{}
	for i, r := range list {
		if r.Revision != i+1 {
			t.Fatalf("revision %d at position %d", r.Revision, i)
		}
		perProc[strings.SplitN(r.RunID, "/", 2)[0]]++
	}
	for p, n := range perProc {
		if n != each {
			t.Fatalf("process %s created %d releases, want %d (%v)", p, n, each, perProc)
		}
	}
	// The helpers exit without waiting for their trash (a replaced
	// .latest): the next process to replace a file there takes it.
	latest, err := b.LatestRelease(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	latest.Phase = engine.PhaseSucceeded
	if err := b.UpdateRelease(ctx, latest); err != nil {
		t.Fatal(err)
	}
	b.Wait()
	assertNoTemps(t, root)
}

// TestHelperProcess is run by TestCrossProcessCreate in child processes: it
// creates N releases, each as latest+1, retrying on ErrRevisionExists.
func TestHelperProcess(t *testing.T) {
	root := os.Getenv(helperEnv)
	if root == "" {
		t.Skip("helper process only")
	}
	id := os.Getenv("KUMO_LOCAL_TEST_HELPER_ID")
	n, err := strconv.Atoi(os.Getenv("KUMO_LOCAL_TEST_HELPER_N"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	for made := 0; made < n; {
		next := 1
		if latest, err := b.LatestRelease(ctx, "p", "w"); err == nil {
			next = latest.Revision + 1
		} else if !errors.Is(err, backend.ErrNotFound) {
			t.Fatal(err)
		}
		r := backendtest.Release("p", "w", next)
		r.RunID = fmt.Sprintf("%s/%d", id, made)
		switch err := b.CreateRelease(ctx, r); {
		case err == nil:
			made++
		case errors.Is(err, backend.ErrRevisionExists):
		default:
			t.Fatal(err)
		}
	}
}
