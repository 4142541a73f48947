package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/gittest"
	"github.com/kumoproj/kumo/runspec"
)

// TestRolloutFromGitSource: a rollout from a git source resolves the
// commit once, when it starts: a commit pushed while wave two waits for
// its approval is not what wave two deploys; every release records the
// rollout's commit and source, and rollout status names it. A rollout.yaml
// with source: and commit: pins an older commit for every workspace. The
// Web UI lists the rollout's applies as its children.
func TestRolloutFromGitSource(t *testing.T) {
	t.Parallel()
	f := &fleet{env: newEnv(t)}
	srv := gittest.New(t, "")
	repo := srv.Repo("shop")
	c1 := repo.Commit("one", gitStackFiles(f.project, "nginx:1"))
	f.ok("source", "add", "shop", "--git", repo.URL, "--path", "stacks/dev")
	kube := fmt.Sprintf("runtimes:\n  kubernetes:\n    kubeconfig: %q\n", f.cluster.Kubeconfig)
	for _, ws := range []string{"ws-a", "ws-b"} {
		f.ok("workspace", "create", ws, "--file", f.writeSpec(ws+".yaml", kube))
	}
	f.fails([]string{"rollout", "create", "bad", "--waves", "one=ws-a", "--commit", c1}, "give --source NAME (source:) too")
	f.fails([]string{"rollout", "create", "bad", "--waves", "one=ws-a", "--source", "shop", "--commit", "main"}, "want a full git commit ID")

	ks := f.startServer()
	r := f.ok("rollout", "create", "first", "--detach", "--source", "shop", "--waves", "one=ws-a; two=ws-b", "--yes", "--approve-waves", "two")
	if !strings.Contains(r.stdout, "Every apply deploys commit "+c1) {
		t.Errorf("rollout create does not name the commit:\n%s", r.stdout)
	}
	f.waitRollout("first", "wave two to await its approval", func(st runspec.RolloutStatus) bool {
		return st.Waves[1].State == runspec.RolloutAwaitingApproval
	})
	c2 := repo.Commit("two", gitStackFiles(f.project, "nginx:2")) // pushed mid-rollout
	f.ok("rollout", "approve", "first")
	st := f.waitRollout("first", "the rollout to succeed", func(st runspec.RolloutStatus) bool { return st.State == runspec.RolloutSucceeded })
	if st.Git == nil || st.Git.Commit != c1 || st.Git.Source != "shop" {
		t.Errorf("rollout status names %+v, want commit %s of shop", st.Git, c1)
	}
	if out := f.ok("rollout", "status", "first").stdout; !strings.Contains(out, "from source shop") || !strings.Contains(out, c1) {
		t.Errorf("rollout status does not show the source commit:\n%s", out)
	}
	// The Web UI lists the rollout's applies (and its health checks) as its
	// children (the UI server's API, as its pages call it, logged in as the
	// owner).
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	owner := &http.Client{Jar: jar}
	if resp, err := owner.Get(ks.info.LoginURL); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	parent := runspec.RolloutWorkflowID(f.project, "first")
	var children []string
	waitFor(t, "the rollout's children in the Web UI", 30*time.Second, func() bool {
		var page struct {
			Executions []struct {
				Execution       struct{ WorkflowID string }
				Type            struct{ Name string }
				ParentExecution *struct{ WorkflowID string }
			}
		}
		getJSONWith(t, owner, ks.info.UIURL+"/api/v1/namespaces/default/workflows?query="+url.QueryEscape(`ParentWorkflowId="`+parent+`"`), &page)
		children = children[:0]
		for _, x := range page.Executions {
			if x.Type.Name == runspec.ApplyWorkflow && x.ParentExecution != nil && x.ParentExecution.WorkflowID == parent {
				children = append(children, x.Execution.WorkflowID)
			}
		}
		sort.Strings(children)
		return len(children) == 2
	})
	if want := []string{runspec.MutatingWorkflowID(f.project, "ws-a"), runspec.MutatingWorkflowID(f.project, "ws-b")}; !slices.Equal(children, want) {
		t.Errorf("the Web UI's children of %s: %v, want %v", parent, children, want)
	}

	for _, ws := range []string{"ws-a", "ws-b"} {
		rows := f.gitReleasesIn(ws)
		if len(rows) != 1 || rows[0].Git == nil || rows[0].Git.Commit != c1 || rows[0].Git.Source != "shop" {
			t.Errorf("%s after rollout first: %+v, want one release of commit %s", ws, rows, c1)
		}
	}

	// Both workspaces at c2, then a rollout.yaml pinning c1 while the ref
	// is at c2 takes every workspace back to c1.
	f.ok("apply", "--workspace", "ws-a", "--yes", "--source", "shop")
	f.ok("apply", "--workspace", "ws-b", "--yes", "--source", "shop")
	spec := f.writeSpec("rollout.yaml", fmt.Sprintf("name: back\nsource: shop\ncommit: %s\nwaves:\n  - {name: all, workspaces: [ws-*]}\n", c1))
	f.ok("rollout", "create", "-f", spec, "--yes")
	for _, ws := range []string{"ws-a", "ws-b"} {
		rows := f.gitReleasesIn(ws)
		if len(rows) != 3 || rows[1].Git.Commit != c2 || rows[2].Git == nil || rows[2].Git.Commit != c1 {
			b, _ := json.Marshal(rows)
			t.Errorf("%s after rollout back: %s, want commits %s then %s", ws, b, c2, c1)
		}
	}
}
