package gitsource_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine/gitsource"
	"github.com/kumoproj/kumo/internal/gittest"
)

func source(url string) *gitsource.Source {
	return &gitsource.Source{Name: "shop", URL: url, Ref: "main", Path: "stacks/prod"}
}

// TestResolveAndFetch: the ref resolves with one request; the commit's tree
// lands in the cache under its ID; a second fetch is a cache hit (no
// request); an older commit (after a force-push) is fetched by its ID.
func TestResolveAndFetch(t *testing.T) {
	srv := gittest.New(t, "")
	repo := srv.Repo("shop")
	c1 := repo.Commit("one", map[string]string{"stacks/prod/stack.yaml": "name: prod\n", "project.yaml": "name: shop\n"})
	c2 := repo.Commit("two", map[string]string{"stacks/prod/stack.yaml": "name: prod # 2\n"})
	g := &gitsource.Git{Cache: t.TempDir()}
	ctx := context.Background()
	s := source(repo.URL)

	before := srv.Requests()
	got, err := g.Resolve(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if got != c2 {
		t.Fatalf("Resolve = %s, want %s", got, c2)
	}
	if n := srv.Requests() - before; n > 2 {
		t.Errorf("ls-remote made %d requests", n)
	}
	dir, err := g.Fetch(ctx, s, c2)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dir) != c2 {
		t.Errorf("checkout %s is not keyed by commit %s", dir, c2)
	}
	data, err := os.ReadFile(filepath.Join(dir, "stacks/prod/stack.yaml"))
	if err != nil || string(data) != "name: prod # 2\n" {
		t.Fatalf("stack.yaml at c2 = %q, %v", data, err)
	}
	before = srv.Requests()
	if again, err := g.Fetch(ctx, s, c2); err != nil || again != dir {
		t.Fatalf("second Fetch = %s, %v", again, err)
	}
	if n := srv.Requests() - before; n != 0 {
		t.Errorf("a cached commit made %d requests", n)
	}

	repo.Push(c1) // force-push back
	if got, err := g.Resolve(ctx, s); err != nil || got != c1 {
		t.Fatalf("after force-push Resolve = %s, %v; want %s", got, err, c1)
	}
	old, err := g.Fetch(ctx, s, c1)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(old, "stacks/prod/stack.yaml")); string(data) != "name: prod\n" {
		t.Errorf("stack.yaml at c1 = %q", data)
	}
	entries, _ := os.ReadDir(filepath.Dir(old))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left over in the cache: %s", e.Name())
		}
	}
}

func TestResolveTagsAndMissingRef(t *testing.T) {
	srv := gittest.New(t, "")
	repo := srv.Repo("tags")
	c1 := repo.Commit("one", map[string]string{"a": "1"})
	repo.Commit("two", map[string]string{"a": "2"})
	repo.Tag("v1.0.0", c1)
	s := source(repo.URL)
	g := &gitsource.Git{}
	s.Ref = "v1.0.0"
	if got, err := g.Resolve(context.Background(), s); err != nil || got != c1 {
		t.Errorf("annotated tag resolves to %s, %v; want the commit %s", got, err, c1)
	}
	s.Ref = "nope"
	if _, err := g.Resolve(context.Background(), s); !errors.Is(err, gitsource.ErrRefNotFound) {
		t.Errorf("missing ref: %v", err)
	}
}

// TestTokenAuth: the token from the file reaches the server; without it the
// server refuses, and no error carries the token.
func TestTokenAuth(t *testing.T) {
	const token = "s3cr3t-token-value"
	srv := gittest.New(t, token)
	repo := srv.Repo("private")
	c := repo.Commit("one", map[string]string{"a": "1"})
	g := &gitsource.Git{Cache: t.TempDir()}
	s := source(repo.URL)
	if _, err := g.Resolve(context.Background(), s); err == nil {
		t.Fatal("resolved without the token")
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Auth.TokenFile = file
	got, err := g.Resolve(context.Background(), s)
	if err != nil || got != c {
		t.Fatalf("Resolve with token = %s, %v", got, err)
	}
	if _, err := g.Fetch(context.Background(), s, c); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("wrong\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = g.Resolve(context.Background(), s)
	if err == nil || strings.Contains(err.Error(), "wrong") {
		t.Errorf("a wrong token: %v", err)
	}
}

// TestFetchRefusesEscapes: a symlink out of the checkout, directly or through
// another link, fails the fetch and leaves nothing in the cache.
func TestFetchRefusesEscapes(t *testing.T) {
	for name, links := range map[string][][2]string{
		"absolute":      {{"stacks/prod/secrets", "/etc"}},
		"dotdot":        {{"stacks/prod/up", "../../.."}},
		"through-link":  {{"sub/d", ".."}, {"sub/e", "d/.."}},
		"dangling-deep": {{"x", "nowhere/at/all"}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := gittest.New(t, "")
			repo := srv.Repo("evil")
			for _, l := range links {
				repo.Symlink(l[0], l[1])
			}
			c := repo.Commit("links", map[string]string{"project.yaml": "name: shop\n"})
			cache := t.TempDir()
			g := &gitsource.Git{Cache: cache}
			_, err := g.Fetch(context.Background(), source(repo.URL), c)
			if err == nil || !strings.Contains(err.Error(), "leads out of the repository") {
				t.Fatalf("Fetch = %v, want a refusal", err)
			}
			if _, err := os.Stat(filepath.Join(cache, gitsource.RepoKey(repo.URL), c)); !os.IsNotExist(err) {
				t.Errorf("the refused commit is in the cache: %v", err)
			}
		})
	}
	srv := gittest.New(t, "")
	repo := srv.Repo("fine")
	repo.Symlink("stacks/prod/base", "../base")
	c := repo.Commit("inside", map[string]string{"stacks/base/x.yaml": "a: 1\n"})
	dir, err := (&gitsource.Git{Cache: t.TempDir()}).Fetch(context.Background(), source(repo.URL), c)
	if err != nil {
		t.Fatalf("a link inside the checkout: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "stacks/prod/base/x.yaml")); err != nil || string(data) != "a: 1\n" {
		t.Errorf("through the inside link: %q, %v", data, err)
	}
}

func TestFetchLimits(t *testing.T) {
	srv := gittest.New(t, "")
	repo := srv.Repo("big")
	files := map[string]string{}
	for i := range 20 {
		files[filepath.Join("d", strings.Repeat("x", i+1))] = strings.Repeat("y", 1000+i)
	}
	c := repo.Commit("big", files)
	g := &gitsource.Git{Cache: t.TempDir(), Limits: gitsource.Limits{Files: 10}}
	if _, err := g.Fetch(context.Background(), source(repo.URL), c); !errors.Is(err, gitsource.ErrTooLarge) {
		t.Errorf("21 entries with Files 10: %v", err)
	}
	g = &gitsource.Git{Cache: t.TempDir(), Limits: gitsource.Limits{TreeBytes: 5000}}
	if _, err := g.Fetch(context.Background(), source(repo.URL), c); !errors.Is(err, gitsource.ErrTooLarge) {
		t.Errorf("20 kB tree with TreeBytes 5000: %v", err)
	}
}

func TestValidate(t *testing.T) {
	ok := []gitsource.Source{
		{Name: "a", URL: "https://github.com/o/r.git", Ref: "main"},
		{Name: "a", URL: "http://127.0.0.1:9/r.git", Ref: "refs/heads/release/1"},
		{Name: "a", URL: "git@github.com:o/r.git", Ref: "v1.2.0", KnownHosts: "/k", Auth: gitsource.Auth{SSHKeyFile: "/id"}},
		{Name: "a", URL: "ssh://git@host:2222/o/r.git", Ref: "main", KnownHosts: "/k", Path: "./stacks/../stacks/prod"},
	}
	for _, s := range ok {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	bad := map[string]gitsource.Source{
		"file URL":          {Name: "a", URL: "file:///etc", Ref: "main"},
		"local path":        {Name: "a", URL: "/srv/repo", Ref: "main"},
		"ext transport":     {Name: "a", URL: "ext::sh -c touch% /tmp/pwned", Ref: "main"},
		"option":            {Name: "a", URL: "--upload-pack=touch /tmp/x", Ref: "main"},
		"password in URL":   {Name: "a", URL: "https://u:tok@github.com/o/r", Ref: "main"},
		"token user in URL": {Name: "a", URL: "https://tok@github.com/o/r", Ref: "main"},
		"remote http":       {Name: "a", URL: "http://example.com/r.git", Ref: "main"},
		"ref option":        {Name: "a", URL: "https://h/r", Ref: "--upload-pack=x"},
		"ref dotdot":        {Name: "a", URL: "https://h/r", Ref: "a..b"},
		"ref commit":        {Name: "a", URL: "https://h/r", Ref: strings.Repeat("a", 40)},
		"path escape":       {Name: "a", URL: "https://h/r", Ref: "main", Path: "a/../../b"},
		"path absolute":     {Name: "a", URL: "https://h/r", Ref: "main", Path: "/etc"},
		"ssh no known":      {Name: "a", URL: "git@h:o/r", Ref: "main"},
		"ssh token":         {Name: "a", URL: "git@h:o/r", Ref: "main", KnownHosts: "/k", Auth: gitsource.Auth{TokenFile: "/t"}},
		"https ssh key":     {Name: "a", URL: "https://h/r", Ref: "main", Auth: gitsource.Auth{SSHKeyFile: "/k"}},
		"quote in key path": {Name: "a", URL: "git@h:o/r", Ref: "main", KnownHosts: "/k'; touch /tmp/x; '"},
	}
	for name, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: %+v accepted", name, s)
		}
	}
}
