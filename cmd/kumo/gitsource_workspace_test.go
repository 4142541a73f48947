package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/internal/gittest"
	"github.com/kumoproj/kumo/runspec"
)

// gitReleasesIn is release list of workspace ws.
func (e *env) gitReleasesIn(ws string) []gitReleaseJSON {
	e.t.Helper()
	var rows []gitReleaseJSON
	if err := json.Unmarshal([]byte(e.ok("release", "list", "--workspace", ws, "-o", "json").stdout), &rows); err != nil {
		e.t.Fatal(err)
	}
	return rows
}

// gitStackFiles is a repository holding project project with the stack
// dev at stacks/dev, its Deployment running image.
func gitStackFiles(project, image string) map[string]string {
	return map[string]string{
		"project.yaml":          "name: " + project + "\n",
		"stacks/dev/stack.yaml": "name: dev\n",
		"stacks/dev/app.yaml":   "apps:\n  web: {workload: {type: service, containers: {web: {image: " + image + "}}}}\n",
	}
}

// TestGitSourceWorkspaceDefaultAndSignedCommits: a workspace's default
// source is what `kumo apply -w prod` deploys outside a stack directory,
// and what a sync schedule created without --source reads; a workspace
// without one gets a clear error, and one naming a source that does not
// exist is refused when saved. A workspace requiring signed commits refuses
// an unsigned commit and one signed by a key it does not allow before
// anything is recorded or applied, naming commit, source and workspace,
// and deploys one signed by an allowed key.
func TestGitSourceWorkspaceDefaultAndSignedCommits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := gittest.New(t, "")
	repo := srv.Repo("shop")
	c1 := repo.Commit("unsigned", gitStackFiles(e.project, "nginx:1"))
	e.ok("source", "add", "shop", "--git", repo.URL, "--path", "stacks/dev")

	alice := gittest.SSHSigner(t, "alice@kumo.invalid")
	mallory := gittest.SSHSigner(t, "mallory@kumo.invalid")
	signers := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(signers, []byte(alice.AllowedSigners), 0o644); err != nil {
		t.Fatal(err)
	}
	kube := fmt.Sprintf("runtimes:\n  kubernetes:\n    kubeconfig: %q\n", e.cluster.Kubeconfig)
	e.fails([]string{"workspace", "create", "prod", "--file", e.writeSpec("bad.yaml", kube+"sources: {default: nope}\n")}, "sources.default: source nope does not exist")
	e.fails([]string{"workspace", "create", "prod", "--file", e.writeSpec("bad2.yaml", kube+"sources: {requireSignedCommits: true}\n")}, "sources.requireSignedCommits: name the allowed keys")
	e.ok("workspace", "create", "other", "--file", e.writeSpec("other.yaml", kube))
	e.ok("workspace", "create", "prod", "--file", e.writeSpec("prod.yaml",
		kube+fmt.Sprintf("sources:\n  default: shop\n  requireSignedCommits: true\n  allowedSignersFile: %q\n", signers)))

	// No stack here (the test runs in cmd/kumo), none named, no default.
	e.fails([]string{"apply", "--workspace", "other", "--yes"}, "is not a stack directory (no stack.yaml) and workspace other has no default source (sources.default)")

	// The default source's ref is at an unsigned commit: refused.
	r := e.fails([]string{"apply", "--workspace", "prod", "--yes"}, "workspace prod requires signed commits")
	for _, want := range []string{c1, "source shop", "carries no signature"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r)
		}
	}
	byMallory := repo.CommitSigned(mallory, "by mallory", gitStackFiles(e.project, "nginx:2"))
	r = e.fails([]string{"preview", "--workspace", "prod"}, "workspace prod requires signed commits")
	if !strings.Contains(r.stdout+r.stderr, byMallory) || !strings.Contains(r.stdout+r.stderr, "No principal matched") {
		t.Errorf("the refusal of a commit signed by another key:\n%s", r)
	}
	if rows := e.gitReleasesIn("prod"); len(rows) != 0 {
		t.Fatalf("refused commits made releases: %+v", rows)
	}
	// An unsigned commit pinned by ID is refused as well.
	e.fails([]string{"apply", "--workspace", "prod", "--yes", "--commit", c1}, "workspace prod requires signed commits")

	byAlice := repo.CommitSigned(alice, "by alice", gitStackFiles(e.project, "nginx:3"))
	e.ok("apply", "--workspace", "prod", "--yes")
	rows := e.gitReleasesIn("prod")
	if len(rows) != 1 || rows[0].Git == nil || rows[0].Git.Commit != byAlice || rows[0].Git.Source != "shop" {
		t.Fatalf("apply -w prod of the default source: %+v", rows)
	}
	// The workspace without the requirement deploys the unsigned commit.
	e.ok("apply", "--workspace", "other", "--yes", "--source", "shop", "--commit", c1)

	// A sync schedule of prod without --source reads the default source.
	e.startServer()
	e.ok("sync", "schedule", "create", "--workspace", "prod", "--every", "1h")
	var s client.SyncSchedule
	if err := json.Unmarshal([]byte(e.ok("sync", "schedule", "show", "--workspace", "prod", "-o", "json").stdout), &s); err != nil {
		t.Fatal(err)
	}
	if s.Source != "shop" || s.Project != e.project || s.ID != runspec.SyncScheduleID(e.project, "prod") {
		t.Errorf("sync schedule of prod: %+v", s)
	}
	e.fails([]string{"sync", "schedule", "create", "--workspace", "other", "--every", "1h"}, "workspace other has no default source")
}
