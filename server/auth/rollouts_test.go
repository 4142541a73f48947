package auth

import (
	"encoding/json"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc/codes"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/runspec"
)

func scopeHeader(h *commonpb.Header, verified bool, workspaces ...string) *commonpb.Header {
	if h == nil {
		h = &commonpb.Header{Fields: map[string]*commonpb.Payload{}}
	}
	s := runspec.RolloutScope{Workspaces: map[string][]string{}, Verified: verified}
	for _, w := range workspaces {
		s.Workspaces[w] = []string{"admin"} // what a forger would claim
	}
	data, _ := json.Marshal(s)
	h.Fields[runspec.RolloutScopeHeader] = &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: data}
	return h
}

func stampedScope(t *testing.T, h *commonpb.Header) runspec.RolloutScope {
	t.Helper()
	var s runspec.RolloutScope
	if err := json.Unmarshal(h.GetFields()[runspec.RolloutScopeHeader].GetData(), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

const rolloutPolicy = `
grants:
  - role: deployer
    subjects: [bob]
    scopes: ["shop/dev", "shop/prod-eu1"]
  - role: viewer
    subjects: [bob]
    scopes: ["shop/*"]
  - role: approver
    subjects: [lena]
    scopes: ["shop/prod-eu1"]
`

func TestRolloutStartIsDecidedOnEveryWorkspace(t *testing.T) {
	f := newFixture(t)
	policy, err := authz.Parse([]byte(rolloutPolicy), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policy.Owner = f.home.Owner()
	f.i.policy = policy
	bob := f.as(t, "bob")
	m := wfs + "StartWorkflowExecution"

	req := start("kumo-rollout/shop/v2", runspec.RolloutWorkflow, runspec.TaskQueue)
	req.Header = scopeHeader(req.Header, true, "dev", "prod-eu1")
	if err := f.i.authorize(bob, m, req); err != nil {
		t.Fatalf("bob rolls out to his two workspaces: %v", err)
	}
	sc := stampedScope(t, req.Header)
	if !sc.Verified || strings.Join(sc.Workspaces["dev"], ",") != "deployer,viewer" || len(sc.Workspaces) != 2 {
		t.Errorf("stamped scope %+v: want bob's real roles, not the forged admin", sc)
	}
	if s := stamped(t, req.Header); s.Name != "bob" || !s.Verified {
		t.Errorf("stamped subject %+v", s)
	}

	for name, c := range map[string]struct {
		req  *workflowservice.StartWorkflowExecutionRequest
		want string
	}{
		"a workspace bob may not deploy": {func() *workflowservice.StartWorkflowExecutionRequest {
			r := start("kumo-rollout/shop/v2", runspec.RolloutWorkflow, runspec.TaskQueue)
			r.Header = scopeHeader(r.Header, true, "dev", "prod-eu2")
			return r
		}(), "bob may not apply shop/prod-eu2: that needs role deployer on shop/prod-eu2"},
		"no scope": {start("kumo-rollout/shop/v2", runspec.RolloutWorkflow, runspec.TaskQueue), "must name the rollout's workspaces in header kumo-rollout-scope"},
		"a pattern as a workspace": {func() *workflowservice.StartWorkflowExecutionRequest {
			r := start("kumo-rollout/shop/v2", runspec.RolloutWorkflow, runspec.TaskQueue)
			r.Header = scopeHeader(r.Header, true, "prod-*")
			return r
		}(), `workspace "prod-*" in header kumo-rollout-scope is not a workspace name`},
		"a rollout under an apply's ID": {start("kumo/shop/dev", runspec.RolloutWorkflow, runspec.TaskQueue), `workflow ID "kumo/shop/dev" is not the ID of a Rollout run`},
	} {
		err := f.i.authorize(bob, m, c.req)
		if code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestRolloutUpdatesAreDecidedOnTheirWorkspaces(t *testing.T) {
	f := newFixture(t)
	policy, err := authz.Parse([]byte(rolloutPolicy), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policy.Owner = f.home.Owner()
	f.i.policy = policy
	m := wfs + "UpdateWorkflowExecution"
	upd := func(name string, workspaces ...string) *workflowservice.UpdateWorkflowExecutionRequest {
		return &workflowservice.UpdateWorkflowExecutionRequest{
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "kumo-rollout/shop/v2"},
			Request: &updatepb.Request{Meta: &updatepb.Meta{Identity: "forged"}, Input: &updatepb.Input{
				Name: name, Header: scopeHeader(nil, true, workspaces...)}},
		}
	}
	r := upd(runspec.RolloutControlUpdate, "dev", "prod-eu1")
	if err := f.i.authorize(f.as(t, "bob"), m, r); err != nil {
		t.Fatalf("bob pauses: %v", err)
	}
	if sc := stampedScope(t, r.Request.Input.Header); !sc.Verified || len(sc.Workspaces) != 2 {
		t.Errorf("scope %+v", sc)
	}
	if r.Request.Meta.Identity != "bob" {
		t.Errorf("identity %q", r.Request.Meta.Identity)
	}
	if err := f.i.authorize(f.as(t, "lena"), m, upd(runspec.RolloutControlUpdate, "prod-eu1")); code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "lena may not cancel shop/prod-eu1") {
		t.Errorf("an approver pauses: %v", err)
	}
	if err := f.i.authorize(f.as(t, "lena"), m, upd(runspec.RolloutApproveUpdate, "prod-eu1")); err != nil {
		t.Errorf("lena approves the prod-eu1 wave: %v", err)
	}
	if err := f.i.authorize(f.as(t, "bob"), m, upd(runspec.RolloutApproveUpdate, "dev")); code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "bob may not approve shop/dev") {
		t.Errorf("bob approves: %v", err)
	}
	// Reads: viewer on shop/* sees it; a workspace-only grant does not.
	q := &workflowservice.QueryWorkflowRequest{Execution: &commonpb.WorkflowExecution{WorkflowId: "kumo-rollout/shop/v2"}}
	if err := f.i.authorize(f.as(t, "bob"), wfs+"QueryWorkflow", q); err != nil {
		t.Errorf("bob (viewer of shop/*) reads: %v", err)
	}
	if err := f.i.authorize(f.as(t, "lena"), wfs+"QueryWorkflow", q); code(err) != codes.PermissionDenied {
		t.Errorf("lena (approver of one workspace) reads: %v", err)
	}
}
