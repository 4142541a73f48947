package gitsource_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine/gitsource"
	"github.com/kumoproj/kumo/internal/gittest"
)

// TestCacheEviction: checkouts unused past the age bound go; past the size
// bound the least recently used go first; a checkout under a lease stays
// whatever the bounds, and goes once released; an evicted commit is
// fetched again on its next use; leftovers of dead fetches go.
func TestCacheEviction(t *testing.T) {
	srv := gittest.New(t, "")
	repo := srv.Repo("shop")
	ctx := context.Background()
	g := &gitsource.Git{Cache: t.TempDir()}
	s := source(repo.URL)
	big := strings.Repeat("x", 64<<10)
	var commits []string
	for i := range 4 {
		commits = append(commits, repo.Commit("c", map[string]string{"project.yaml": "name: shop\n", "stacks/prod/stack.yaml": "name: prod\n", "blob": big + string(rune('a'+i))}))
	}
	dir := func(c string) string { return filepath.Join(g.Cache, gitsource.RepoKey(s.URL), c) }
	exists := func(c string) bool { _, err := os.Stat(dir(c)); return err == nil }
	// Used in order 0, 1, 2, 3, an hour apart, 0 the longest ago.
	for i, c := range commits {
		l, err := g.Checkout(ctx, s, c)
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
		at := time.Now().Add(-time.Duration(4-i) * time.Hour)
		if err := os.Chtimes(dir(c), at, at); err != nil {
			t.Fatal(err)
		}
	}
	stale := filepath.Join(g.Cache, gitsource.RepoKey(s.URL), ".fetch-dead")
	if err := os.Mkdir(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	_ = os.Chtimes(stale, old, old)

	// Age: 0 (4h) and 1 (3h) are past 150 minutes; 1 is held by a run.
	held, err := g.Checkout(ctx, s, commits[1])
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(dir(commits[1]), time.Now().Add(-3*time.Hour), time.Now().Add(-3*time.Hour))
	rep, err := g.Evict(gitsource.CacheBounds{MaxAge: 150 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Removed != 1 || rep.InUse != 1 || exists(commits[0]) || !exists(commits[1]) {
		t.Fatalf("age bound: %+v; 0 exists %v, 1 (held) exists %v", rep, exists(commits[0]), exists(commits[1]))
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a dead fetch's scratch directory is left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(held.Dir, "stacks/prod/stack.yaml")); err != nil {
		t.Fatalf("the held checkout lost its files: %v", err)
	}
	held.Release()

	// Size: room for two and a half checkouts of the three left; the least
	// recently used (1) goes, 2 and 3 stay.
	size := rep.Bytes / 3
	rep, err = g.Evict(gitsource.CacheBounds{MaxBytes: 2*size + size/2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Removed != 1 || exists(commits[1]) || !exists(commits[2]) || !exists(commits[3]) {
		t.Fatalf("size bound: %+v; exists 1 %v 2 %v 3 %v", rep, exists(commits[1]), exists(commits[2]), exists(commits[3]))
	}
	if _, err := os.Stat(dir(commits[1]) + ".commit"); !os.IsNotExist(err) {
		t.Errorf("an evicted checkout's commit object is left: %v", err)
	}

	// An evicted commit is fetched again.
	before := srv.Requests()
	l, err := g.Checkout(ctx, s, commits[0])
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if srv.Requests() == before {
		t.Error("an evicted commit was not fetched again")
	}
	if data, err := os.ReadFile(filepath.Join(l.Dir, "blob")); err != nil || string(data) != big+"a" {
		t.Errorf("refetched blob: %d bytes, %v", len(data), err)
	}
}
