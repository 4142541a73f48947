package client_test

import (
	"context"
	"testing"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

// TestAOneShotRunStartsWithItsFirstTask: a one-shot command's run asks for
// its first workflow task with its start (eager start), for the worker in
// its own process, and the frontend decides that as it decides a poll: the
// starter must be a worker (here the owner, who is).
func TestAOneShotRunStartsWithItsFirstTask(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx := context.Background()
	c, err := client.Open(client.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run, err := c.Apply(ctx, client.Request{Project: "p", Workspace: engine.DefaultWorkspace, Spec: &engine.Spec{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	es, err := c.Audit(ctx, client.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var took bool
	for _, e := range es {
		took = took || (e.Action == string(authz.Work) && e.Target == run.WorkflowID && e.Result == "allowed")
	}
	if !took {
		t.Errorf("the start of %s did not take its first task with it; audited: %+v", run.WorkflowID, es)
	}
}
