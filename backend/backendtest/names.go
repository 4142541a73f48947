package backendtest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend"
)

// BadNames are project, workspace, run and log part names every backend must
// refuse: path separators and traversal (plain and percent-encoded, which an
// object store or a URL path might decode), hidden and option-like names, spaces,
// control characters, non-ASCII, characters with a meaning in URLs or shells, and
// overlong names.
var BadNames = []string{
	"", ".", "..", "...", "../x", "../../../../tmp/kumo-escape", "a/b", "a/", "/", "/abs", `a\b`, `..\x`, "x/../y",
	"%2F", "a%2Fb", "..%2F..%2Fetc", "%2e%2e", "a%00b",
	".hidden", "-dash", "_under", "a b", "a ", " a", "a\tb", "a\x00b", "a\nb", "a\rb",
	"ü", "名前", "a\u202eb", "a:b", "a?b", "a#b", "a*b", "a&b", "a+b", "a=b", "a@b", "a~b", "$HOME", "a|b", "a;b",
	strings.Repeat("a", backend.MaxNameLength+1),
}

// checkInvalid fails unless err is a validation error naming the bad value.
func checkInvalid(t *testing.T, op, name string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s with name %q: no error", op, name)
	}
	if !errors.Is(err, backend.ErrInvalidName) {
		t.Fatalf("%s with name %q: %v, want ErrInvalidName", op, name, err)
	}
	for _, other := range []error{backend.ErrNotFound, backend.ErrRevisionExists, backend.ErrExists, backend.ErrConflict} {
		if errors.Is(err, other) {
			t.Fatalf("%s with name %q: %v also matches %v", op, name, err, other)
		}
	}
	if name != "" && !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
		t.Fatalf("%s with name %q: error %q does not name the bad value", op, name, err)
	}
}

func testInvalidNames(t *testing.T, b backend.Backend) {
	for _, good := range []string{"a", "A-b_c.d", "0", "x..y", "a.", strings.Repeat("a", backend.MaxNameLength)} {
		if err := backend.ValidateName("project", good); err != nil {
			t.Fatalf("ValidateName(%q): %v", good, err)
		}
	}
	mustCreate(t, b, Release(strings.Repeat("a", backend.MaxNameLength), "x..y", 1))
	mustCreate(t, b, Release("p", "w", 1))

	for _, bad := range BadNames {
		if err := backend.ValidateName("project", bad); err == nil {
			t.Fatalf("ValidateName(%q): no error", bad)
		}
		for _, pw := range [][2]string{{bad, "w"}, {"p", bad}} {
			p, w := pw[0], pw[1]
			key := backend.ReleaseKey{Project: p, Workspace: w, Revision: 1}
			checkInvalid(t, "CreateRelease", bad, b.CreateRelease(ctx, Release(p, w, 1)))
			checkInvalid(t, "UpdateRelease", bad, b.UpdateRelease(ctx, Release(p, w, 1)))
			_, err := b.GetRelease(ctx, p, w, 1)
			checkInvalid(t, "GetRelease", bad, err)
			_, err = b.LatestRelease(ctx, p, w)
			checkInvalid(t, "LatestRelease", bad, err)
			_, err = b.ListReleases(ctx, p, w)
			checkInvalid(t, "ListReleases", bad, err)
			checkInvalid(t, "PutStateEntry", bad, b.PutStateEntry(ctx, key, backend.StateEntry{ID: "v1:Namespace:x"}))
			_, _, err = b.GetStateEntry(ctx, key, "v1:Namespace:x")
			checkInvalid(t, "GetStateEntry", bad, err)
			_, err = b.ListStateEntries(ctx, key)
			checkInvalid(t, "ListStateEntries", bad, err)
			checkInvalid(t, "ClearStateEntries", bad, b.ClearStateEntries(ctx, key))
		}
		_, err := b.ListProjects(ctx, bad)
		checkInvalid(t, "ListProjects", bad, err)
		checkInvalid(t, "CreateWorkspace", bad, b.CreateWorkspace(ctx, Workspace(bad)))
		checkInvalid(t, "PutWorkspace", bad, b.PutWorkspace(ctx, Workspace(bad)))
		_, err = b.GetWorkspace(ctx, bad)
		checkInvalid(t, "GetWorkspace", bad, err)
		checkInvalid(t, "DeleteWorkspace", bad, b.DeleteWorkspace(ctx, bad))
		checkInvalid(t, "PutRunLog run", bad, b.PutRunLog(ctx, bad, "part", []byte("x")))
		checkInvalid(t, "PutRunLog part", bad, b.PutRunLog(ctx, "run", bad, []byte("x")))
		_, err = b.RunLog(ctx, bad)
		checkInvalid(t, "RunLog", bad, err)
	}
	// Nothing the refused calls named became visible under a cleaned-up or decoded
	// name.
	for _, pw := range [][2]string{{"x", "w"}, {"p", "x"}, {"tmp", "kumo-escape"}, {"y", "w"}, {"a", "b"}, {"etc", "w"}, {"p", "etc"}} {
		list, err := b.ListReleases(ctx, pw[0], pw[1])
		if err != nil || len(list) != 0 {
			t.Fatalf("ListReleases(%s, %s) after refused calls: %d releases, %v", pw[0], pw[1], len(list), err)
		}
	}
	list, err := b.ListReleases(ctx, "p", "w")
	if err != nil || len(list) != 1 {
		t.Fatalf("ListReleases(p, w) after refused calls: %d releases, %v", len(list), err)
	}
	if names, err := b.ListWorkspaces(ctx); err != nil || len(names) != 0 {
		t.Fatalf("ListWorkspaces after refused calls: %q, %v; want none", names, err)
	}
	for _, w := range []string{"w", "x", "b", "etc"} {
		projects, err := b.ListProjects(ctx, w)
		want := map[string][]string{"w": {"p"}}[w]
		if err != nil || strings.Join(projects, ",") != strings.Join(want, ",") {
			t.Fatalf("ListProjects(%s) after refused calls: %q, %v; want %q", w, projects, err, want)
		}
	}
	for _, run := range []string{"run", "a", "x", "etc", "b"} {
		if _, err := b.RunLog(ctx, run); !errors.Is(err, backend.ErrNotFound) {
			t.Fatalf("RunLog(%s) after refused calls: %v, want ErrNotFound", run, err)
		}
	}
}

// testNilArguments: nil records are refused, not stored or dereferenced.
func testNilArguments(t *testing.T, b backend.Backend) {
	if err := b.CreateRelease(ctx, nil); err == nil {
		t.Fatal("CreateRelease(nil): no error")
	}
	if err := b.UpdateRelease(ctx, nil); err == nil {
		t.Fatal("UpdateRelease(nil): no error")
	}
	if err := b.CreateWorkspace(ctx, nil); err == nil {
		t.Fatal("CreateWorkspace(nil): no error")
	}
	if err := b.PutWorkspace(ctx, nil); err == nil {
		t.Fatal("PutWorkspace(nil): no error")
	}
	if _, err := b.PutSpec(ctx, nil); err == nil {
		t.Fatal("PutSpec(nil): no error")
	}
	if names, err := b.ListWorkspaces(ctx); err != nil || len(names) != 0 {
		t.Fatalf("ListWorkspaces after nil puts: %q, %v", names, err)
	}
}
