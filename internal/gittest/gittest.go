// Package gittest serves git repositories over HTTP on loopback for tests:
// git's own http-backend behind net/http/cgi (smart HTTP, protocol v2), with
// an optional token every request must carry, and helpers to commit, push and
// force-push as a developer would.
package gittest

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Server is a git HTTP server on loopback.
type Server struct {
	URL  string
	root string
	// Token, when set, is the password every request must carry (HTTP basic
	// auth, any user name), as GitHub, GitLab and Gitea take access tokens.
	token string
	// Requests counts the HTTP requests served (an ls-remote is one).
	requests atomic.Int64
	t        testing.TB
}

// backend is git's http-backend program.
func backend(t testing.TB) string {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("git is not installed: %v", err)
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("git-http-backend: %v", err)
	}
	return p
}

// New starts a server whose repositories live in a temporary directory; with
// a token, requests without it get 401.
func New(t testing.TB, token string) *Server {
	s := &Server{root: t.TempDir(), token: token, t: t}
	h := &cgi.Handler{Path: backend(t), Env: []string{"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if s.token != "" {
			want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+s.token))
			if r.Header.Get("Authorization") != want {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Requests is how many HTTP requests the server has served.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Repo is one repository on the server and a work tree pushing to it.
type Repo struct {
	// URL is what a client clones.
	URL  string
	bare string
	work string
	t    testing.TB
}

// Repo creates an empty repository name.git on the server.
func (s *Server) Repo(name string) *Repo {
	r := &Repo{URL: s.URL + "/" + name + ".git", bare: filepath.Join(s.root, name+".git"), work: s.t.TempDir(), t: s.t}
	git(s.t, "", "init", "--quiet", "--bare", "--initial-branch=main", r.bare)
	git(s.t, "", "-C", r.bare, "config", "http.receivepack", "true")
	git(s.t, "", "init", "--quiet", "--initial-branch=main", r.work)
	return r
}

// Commit writes files (path -> content; "" content removes the file) in the
// work tree, commits them and pushes main; it returns the commit ID.
func (r *Repo) Commit(msg string, files map[string]string) string {
	r.write(files)
	git(r.t, r.work, "-c", "user.name=kumo test", "-c", "user.email=test@kumo.invalid", "commit", "--quiet", "--allow-empty", "-m", msg)
	id := strings.TrimSpace(git(r.t, r.work, "rev-parse", "HEAD"))
	r.Push(id)
	return id
}

// write writes files into the work tree and stages them.
func (r *Repo) write(files map[string]string) {
	for p, content := range files {
		full := filepath.Join(r.work, p)
		if content == "" {
			_ = os.Remove(full)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	git(r.t, r.work, "add", "--all")
}

// Symlink adds a symlink to the work tree (committed by the next Commit).
func (r *Repo) Symlink(name, target string) {
	full := filepath.Join(r.work, name)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Symlink(target, full); err != nil {
		r.t.Fatal(err)
	}
}

// Push makes main on the server commit (a force push when it goes back),
// and resets the work tree to it.
func (r *Repo) Push(commit string) {
	git(r.t, r.work, "reset", "--quiet", "--hard", commit)
	git(r.t, r.work, "push", "--quiet", "--force", r.bare, commit+":refs/heads/main")
}

// Tag makes an annotated tag at commit on the server.
func (r *Repo) Tag(name, commit string) {
	git(r.t, r.work, "-c", "user.name=kumo test", "-c", "user.email=test@kumo.invalid", "tag", "-a", "-m", name, name, commit)
	git(r.t, r.work, "push", "--quiet", r.bare, "refs/tags/"+name)
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gitEnv(t, dir, nil, args...)
}

func gitEnv(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"), env...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out.String()
}
