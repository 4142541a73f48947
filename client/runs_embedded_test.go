package client_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// writeStack writes a project p with stack dev whose app is app.yaml's content.
func writeStack(t *testing.T, app string) string {
	t.Helper()
	project := t.TempDir()
	for path, content := range map[string]string{"project.yaml": "name: p\n", "dev/stack.yaml": "name: dev\n", "dev/app.yaml": app} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(project, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(project, "dev")
}

// TestRunsAreListedFromVisibility against the embedded server (SQLite
// visibility): every status filter is a query it accepts and answers right,
// a later client on the same home lists, finds and shows the runs of an
// earlier one, and asks them for their progress.
func TestRunsAreListedFromVisibility(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx := context.Background()
	home := t.TempDir()
	c, err := client.Open(client.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	req := client.Request{Project: "p", Workspace: engine.DefaultWorkspace}
	apply := req
	apply.Spec = &engine.Spec{}
	run, err := c.Apply(ctx, apply)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := run.Wait(ctx); err != nil || res.Status != runspec.StatusSucceeded {
		t.Fatalf("apply of an empty spec: %+v, %v", res, err)
	}
	applied := run.RunID
	gen := req
	gen.StackDir = writeStack(t, "apps: {web: {workload: {type: service, containers: {web: {image: nginx}}}}}\n")
	if run, err = c.Generate(ctx, gen); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Spec(ctx); err != nil {
		t.Fatal(err)
	}
	gen.StackDir = writeStack(t, "apps: {web: {workload: {type: daemon}}}\n")
	if run, err = c.Generate(ctx, gen); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Spec(ctx); err == nil {
		t.Fatal("generate of a bad stack succeeded")
	}
	failed := run.RunID
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	c, err = client.Open(client.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runs, err := c.ListRuns(ctx, client.RunFilter{Project: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.Operation+" "+r.Status+" "+r.Stack)
	}
	if want := "generate failed dev,generate succeeded dev,apply succeeded "; strings.Join(got, ",") != want {
		t.Errorf("runs, newest first: %q, want %q", strings.Join(got, ","), want)
	}
	if a := runs[len(runs)-1]; a.RunID != applied || a.Revision != 1 || a.Changes == nil || *a.Changes != (runspec.ChangeCounts{}) {
		t.Errorf("the apply's listing: %+v (changes %v)", a, a.Changes)
	}
	for filter, want := range map[client.RunFilter]int{
		{Status: "running"}: 0, {Status: "awaiting-approval"}: 0, {Status: "completed"}: 2, {Status: "failed"}: 1, {Status: "cancelled"}: 0,
		{Operation: "generate"}: 2, {Operation: "apply", Status: "completed"}: 1, {Workspace: "prod"}: 0, {Project: "q"}: 0, {Limit: 1}: 1,
	} {
		if filter.Project == "" {
			filter.Project = "p"
		}
		runs, err := c.ListRuns(ctx, filter)
		if err != nil {
			t.Errorf("list %+v: %v", filter, err)
		} else if len(runs) != want {
			t.Errorf("list %+v: %d runs, want %d", filter, len(runs), want)
		}
	}

	if _, err := c.FindRun(ctx, "q", applied); err == nil || !strings.Contains(err.Error(), `belongs to project "p"`) {
		t.Errorf("FindRun of another project's run: %v", err)
	}
	if _, err := c.FindRun(ctx, "p", "0f8e2c1a-0000-4000-8000-000000000001"); !errors.Is(err, client.ErrNoRun) {
		t.Errorf("FindRun of an unknown run: %v", err)
	}
	d, err := c.ShowRun(ctx, "p", applied)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != "succeeded" || d.ProgressError != "" || d.Stage != runspec.StageDone || d.Error != "" {
		t.Errorf("show of the apply: %+v", d)
	}
	if d, err = c.ShowRun(ctx, "p", failed); err != nil || !strings.Contains(d.Error, `unknown workload type "daemon"`) {
		t.Errorf("show of the failed generate: %+v, %v", d, err)
	}
	if _, err := c.CancelRun(ctx, "p", applied, "late"); !errors.Is(err, client.ErrRunEnded) {
		t.Errorf("cancel of an ended run: %v", err)
	}
}
