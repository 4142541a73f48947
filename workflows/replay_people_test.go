package workflows

import (
	"context"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
)

// pErin is the third person of the recorded runs: a deployer and approver in
// group sre, who approves one run and cancels the other.
var pErin = runspec.Subject{Name: "oidc:erin", Roles: []string{"deployer", "approver"}, Groups: []string{"sre"}, Verified: true}

// recordPeoplePolicy grants the recorded runs' people their roles.
func recordPeoplePolicy(t *testing.T) string {
	t.Helper()
	return writePolicy(t, `grants:
  - role: deployer
    subjects: ["local:alice", "oidc:erin"]
    scopes: ["*/*"]
  - role: approver
    subjects: ["local:alice", "local:bob", "oidc:erin"]
    scopes: ["*/*"]
`)
}

// recordPeopleHistories records runs whose starts, updates and signals carry
// SubjectHeader, as the kumo frontend stamps them, in a workspace whose
// approval policy needs two distinct approvers from group sre, four-eyes:
// people-approved (the starter's approval is refused, which leaves no event;
// two others approve), people-cancelled (one approval, then a cancel signal).
// only, when it names some runs, limits the recording to them.
func recordPeopleHistories(t *testing.T, srv *embedded.Server, tc client.Client, b backend.Backend, only map[string]bool) {
	ctx := context.Background()
	if err := b.PutWorkspace(ctx, &engine.Workspace{Name: "fe", Approval: engine.ApprovalPolicy{Required: 2, Groups: []string{"sre"}, FourEyes: true}}); err != nil {
		t.Fatal(err)
	}
	as := func(s runspec.Subject) client.Client {
		return dialAs(t, srv, s.Name, &stamp{subject: &s})
	}
	alice, bob, erin := as(pAlice), as(pBob), as(pErin)
	for _, name := range []string{"people-approved", "people-cancelled"} {
		if *recordOnly != "" && !only[name] {
			continue
		}
		// Resources of its own, so that each run has changes to approve.
		hash, err := b.PutSpec(ctx, &engine.Spec{Resources: []engine.Resource{cm(name + "-a"), cm(name+"-b", "v1:ConfigMap:ns:"+name+"-a")}})
		if err != nil {
			t.Fatal(err)
		}
		in := runspec.RunInput{Project: "p", Workspace: "fe", SpecHash: hash, Parallelism: 2, StartedBy: "recorder"}
		wr, err := alice.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: recordID(runspec.ApplyWorkflow, "p", "fe", name), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow, in)
		if err != nil {
			t.Fatal(err)
		}
		awaitApprovalStage(t, tc, wr)
		if _, err := sendApproval(alice, wr, runspec.ApprovalRequest{Approve: true, By: "recorder"}); err == nil {
			t.Fatal("the starter's approval was accepted under four-eyes")
		}
		if _, err := sendApproval(bob, wr, runspec.ApprovalRequest{Approve: true, By: "recorder"}); err != nil {
			t.Fatal(err)
		}
		if name == "people-cancelled" {
			if err := erin.SignalWorkflow(ctx, wr.GetID(), wr.GetRunID(), runspec.CancelSignal, runspec.Cancel{Reason: "recorded", By: "recorder"}); err != nil {
				t.Fatal(err)
			}
			if err := wr.Get(ctx, nil); err == nil {
				t.Fatalf("run %s succeeded; it is recorded cancelled", name)
			}
		} else {
			if _, err := sendApproval(erin, wr, runspec.ApprovalRequest{Approve: true, By: "recorder"}); err != nil {
				t.Fatal(err)
			}
			if err := wr.Get(ctx, nil); err != nil {
				t.Fatalf("run %s: %v", name, err)
			}
		}
		saveHistory(t, tc, wr, name)
	}
}
