package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/gittest"
)

type gitReleaseJSON struct {
	Revision int               `json:"revision"`
	Phase    string            `json:"phase"`
	Git      *engine.GitOrigin `json:"git"`
}

func (e *env) gitReleases() []gitReleaseJSON {
	e.t.Helper()
	var rows []gitReleaseJSON
	if err := json.Unmarshal([]byte(e.ok("release", "list", "-o", "json").stdout), &rows); err != nil {
		e.t.Fatal(err)
	}
	return rows
}

// syncState is `kumo sync schedule show`'s record of what the sync did.
func (e *env) syncState() client.SyncSchedule {
	e.t.Helper()
	var s client.SyncSchedule
	if err := json.Unmarshal([]byte(e.ok("sync", "schedule", "show", "--source", "shop", "--workspace", "default", "-o", "json").stdout), &s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// waitDeployed waits for the sync to start a run for commit and returns
// how long after since that was; then it waits for that run's release.
func (e *env) waitDeployed(commit string, since time.Time, revision int) time.Duration {
	e.t.Helper()
	var started time.Time
	waitFor(e.t, "the sync to start a run for "+commit[:12], 2*time.Minute, func() bool {
		s := e.syncState()
		if s.State != nil && s.State.Commit == commit && s.State.Time.After(since) {
			started = s.State.Time
			return true
		}
		return false
	})
	waitFor(e.t, "the release of "+commit[:12], 2*time.Minute, func() bool {
		rows := e.gitReleases()
		return len(rows) == revision && rows[revision-1].Phase == "succeeded"
	})
	if g := e.gitReleases()[revision-1].Git; g == nil || g.Commit != commit || g.Source != "shop" || g.Path != "stacks/dev" {
		e.t.Fatalf("revision %d records %+v, want commit %s of source shop", revision, g, commit)
	}
	return started.Sub(since)
}

func signedPush(t *testing.T, url, secret, repoURL, commit string, sign bool) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"ref": "refs/heads/main", "after": commit, "repository": map[string]any{"clone_url": repoURL}})
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	sig := hex.EncodeToString(mac.Sum(nil))
	if !sign {
		sig = strings.Repeat("0", len(sig))
	}
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", "sha256="+sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// TestGitSourceSyncAndWebhook: a source at a ref is added (a path out of the
// repository refused); apply --source records its commit; a sync schedule's
// unchanged ticks start no run, a pushed commit is deployed within a tick; a
// signed webhook POST deploys at once, a badly signed one or one for an
// unknown repository gets the same 404 and starts nothing; a force-push back
// to an older commit deploys it again.
func TestGitSourceSyncAndWebhook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := gittest.New(t, "")
	repo := srv.Repo("shop")
	app := func(image string) string {
		return "apps:\n  web: {workload: {type: service, containers: {web: {image: " + image + "}}}}\n"
	}
	c1 := repo.Commit("one", map[string]string{"project.yaml": "name: " + e.project + "\n", "stacks/dev/stack.yaml": "name: dev\n", "stacks/dev/app.yaml": app("nginx:1")})
	const secret = "a-webhook-secret-of-some-length"
	secretFile := filepath.Join(t.TempDir(), "hook-secret")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.fails([]string{"source", "add", "bad", "--git", repo.URL, "--path", "stacks/../../x"}, "leads out of the repository")
	e.fails([]string{"source", "add", "bad", "--git", repo.URL, "--ref", "nope"}, `has no branch or tag "nope"`)
	e.ok("source", "add", "shop", "--git", repo.URL, "--path", "stacks/dev", "--webhook-secret-file", secretFile)
	if out := e.ok("source", "list").stdout; !strings.Contains(out, "shop") || !strings.Contains(out, repo.URL) {
		t.Errorf("source list:\n%s", out)
	}

	e.ok("apply", "--yes", "--source", "shop")
	rows := e.gitReleases()
	if len(rows) != 1 || rows[0].Git == nil || rows[0].Git.Commit != c1 {
		t.Fatalf("apply --source: %+v", rows)
	}
	if out := e.ok("release", "list").stdout; !strings.Contains(out, "shop@main "+c1[:12]) {
		t.Errorf("release list does not show the source commit:\n%s", out)
	}

	s := e.startServer()
	e.ok("sync", "schedule", "create", "--source", "shop", "--workspace", "default", "--every", "2s")
	before := srv.Requests()
	time.Sleep(5 * time.Second) // two ticks or more: c1 is deployed already
	if n := len(e.gitReleases()); n != 1 {
		t.Fatalf("unchanged ticks made releases: %d", n)
	}
	if n := srv.Requests() - before; n == 0 || n > 8 {
		t.Errorf("unchanged ticks made %d requests to the git server (want an ls-remote each)", n)
	}

	pushed := time.Now()
	c2 := repo.Commit("two", map[string]string{"stacks/dev/app.yaml": app("nginx:2")})
	t.Logf("push to started run, schedule every 2s: %s", e.waitDeployed(c2, pushed, 2).Round(time.Millisecond))

	// The webhook, with the schedule's next tick an hour away.
	e.ok("sync", "schedule", "delete", "--source", "shop", "--workspace", "default")
	e.ok("sync", "schedule", "create", "--source", "shop", "--workspace", "default", "--every", "1h")
	hook := s.info.APIURL + "/hooks/git"
	c3 := repo.Commit("three", map[string]string{"stacks/dev/app.yaml": app("nginx:3")})
	code, bad := signedPush(t, hook, secret, repo.URL, c3, false)
	code2, unknown := signedPush(t, hook, secret, srv.URL+"/other.git", c3, true)
	if code != http.StatusNotFound || code2 != http.StatusNotFound || bad != unknown {
		t.Errorf("bad signature: %d %q; unknown repository: %d %q; want the same 404", code, bad, code2, unknown)
	}
	time.Sleep(2 * time.Second)
	if n := len(e.gitReleases()); n != 2 {
		t.Fatalf("a refused delivery deployed: %d releases", n)
	}
	pushed = time.Now()
	if code, body := signedPush(t, hook, secret, repo.URL, c3, true); code != http.StatusAccepted || !strings.Contains(body, "kumo-sync/"+e.project+"/default") {
		t.Fatalf("signed delivery: %d %s", code, body)
	}
	t.Logf("push to started run, webhook: %s", e.waitDeployed(c3, pushed, 3).Round(time.Millisecond))

	// A force-push back to c1 is a new deploy of c1.
	repo.Push(c1)
	pushed = time.Now()
	if code, body := signedPush(t, hook, secret, repo.URL, c1, true); code != http.StatusAccepted {
		t.Fatalf("force-push delivery: %d %s", code, body)
	}
	e.waitDeployed(c1, pushed, 4)
}
