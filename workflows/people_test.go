package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/auth"
	"github.com/kumoproj/kumo/server/embedded"
)

// stamp is a client interceptor that puts a subject in SubjectHeader on every
// start, signal and update, as the kumo frontend does for the subject it
// authenticated (nil: no header, as a Temporal without kumo's frontend).
type stamp struct {
	interceptor.ClientInterceptorBase
	subject *runspec.Subject
}

func (s *stamp) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &stampOut{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}, subject: s.subject}
}

type stampOut struct {
	interceptor.ClientOutboundInterceptorBase
	subject *runspec.Subject
}

func (s *stampOut) put(ctx context.Context) {
	if s.subject == nil {
		return
	}
	data, err := json.Marshal(s.subject)
	if err != nil {
		panic(err)
	}
	interceptor.Header(ctx)[runspec.SubjectHeader] = &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: data}
}

func (s *stampOut) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	s.put(ctx)
	return s.Next.ExecuteWorkflow(ctx, in)
}

func (s *stampOut) SignalWorkflow(ctx context.Context, in *interceptor.ClientSignalWorkflowInput) error {
	s.put(ctx)
	return s.Next.SignalWorkflow(ctx, in)
}

func (s *stampOut) UpdateWorkflow(ctx context.Context, in *interceptor.ClientUpdateWorkflowInput) (client.WorkflowUpdateHandle, error) {
	s.put(ctx)
	return s.Next.UpdateWorkflow(ctx, in)
}

// peopleTest is one Temporal server with a worker, clients acting as
// subjects, and workspaces with approval policies.
type peopleTest struct {
	t     *testing.T
	h     *harness
	tc    client.Client
	ctx   context.Context
	as    map[string]client.Client
	srv   *embedded.Server
	owner string
}

var (
	pAlice = runspec.Subject{Name: "local:alice", Roles: []string{"deployer", "approver"}, Groups: []string{"sre"}, Verified: true}
	pBob   = runspec.Subject{Name: "local:bob", Roles: []string{"approver"}, Groups: []string{"sre"}, Verified: true}
	pCarol = runspec.Subject{Name: "oidc:carol", Roles: []string{"approver"}, Groups: []string{"dev"}, Verified: true}
	pDan   = runspec.Subject{Name: "local:dan", Roles: []string{"deployer"}, Groups: []string{"sre"}, Verified: true}
)

func newPeopleTest(t *testing.T) *peopleTest {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	h := newHarness(t)
	// The kumo frontend authenticates each person by a bearer token and
	// stamps the subject its verifier names, with the roles the policy
	// grants; the stamps the people's clients put on their requests are
	// replaced.
	tokens := peopleTokens{}
	for _, s := range []runspec.Subject{pAlice, pBob, pCarol, pDan} {
		tokens["token-"+s.Name] = s
	}
	srv := startServerWith(t, embedded.Options{Verifiers: []auth.BearerVerifier{tokens}, PolicyFile: writePeoplePolicy(t)})
	tc := dialAs(t, srv, "")
	startWorkerOn(t, tc, h.acts, worker.Options{})
	p := &peopleTest{t: t, h: h, tc: tc, ctx: ctx, as: map[string]client.Client{}, srv: srv, owner: srv.PKI().Owner()}
	for name, policy := range map[string]engine.ApprovalPolicy{
		"foureyes": {Required: 1, FourEyes: true},
		"two":      {Required: 2, Groups: []string{"sre"}},
		"one":      {Required: 1},
	} {
		if err := h.backend.PutWorkspace(ctx, &engine.Workspace{Name: name, Approval: policy}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []runspec.Subject{pAlice, pBob, pCarol, pDan} {
		p.as[s.Name] = p.client(s.Name, &s)
	}
	// A client that forges a subject of its own: the home's owner, by its
	// certificate, as the frontend stamps it.
	p.as[""] = p.client("", &runspec.Subject{Name: "security-team@corp", Roles: []string{"admin"}, Verified: true})
	return p
}

// client is a client authenticated as name ("": the home's owner) that
// stamps forged on its requests, which the frontend replaces.
func (p *peopleTest) client(name string, forged *runspec.Subject) client.Client {
	c := dialAs(p.t, p.srv, name, &stamp{subject: forged})
	return c
}

// peopleTokens is the bearer verifier of the people test: a token per
// person, as a kumo-issued token or an OIDC issuer names them.
type peopleTokens map[string]runspec.Subject

func (v peopleTokens) Verify(_ context.Context, token string) (runspec.Subject, error) {
	s, ok := v[token]
	if !ok {
		return runspec.Subject{}, errors.New("unknown token")
	}
	return runspec.Subject{Name: s.Name, Groups: s.Groups}, nil
}

// writePeoplePolicy grants the people test's subjects the roles they hold.
func writePeoplePolicy(t *testing.T) string {
	t.Helper()
	return writePolicy(t, `grants:
  - role: deployer
    subjects: ["local:alice", "local:dan"]
    scopes: ["*/*"]
  - role: approver
    subjects: ["local:alice", "local:bob", "oidc:carol"]
    scopes: ["*/*"]
`)
}

// writePolicy writes the authorization policy doc to a file of the test's
// and returns its path.
func writePolicy(t *testing.T, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// dialAs connects to srv as name's token ("": the owner's certificate alone).
func dialAs(t *testing.T, srv *embedded.Server, name string, interceptors ...interceptor.ClientInterceptor) client.Client {
	t.Helper()
	opts := client.Options{HostPort: srv.Address(), Logger: quietLogger, ConnectionOptions: ownerConnection(t, srv), Interceptors: interceptors}
	if name != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials("token-" + name)
	}
	c, err := client.Dial(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// start starts an Apply of project in workspace as who, with ConfigMap a.
func (p *peopleTest) start(who, project, workspace string, autoApprove bool) client.WorkflowRun {
	p.t.Helper()
	hash, err := p.h.backend.PutSpec(p.ctx, &engine.Spec{Resources: []engine.Resource{cm(project + "-a")}})
	if err != nil {
		p.t.Fatal(err)
	}
	in := runspec.RunInput{Project: project, Workspace: workspace, SpecHash: hash, AutoApprove: autoApprove, StartedBy: "forged-starter@host"}
	run, err := p.as[who].ExecuteWorkflow(p.ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID(project, workspace), TaskQueue: runspec.TaskQueue},
		runspec.ApplyWorkflow, in)
	if err != nil {
		p.t.Fatal(err)
	}
	return run
}

// awaitApproval waits until run awaits approval.
func (p *peopleTest) awaitApproval(run client.WorkflowRun) {
	p.t.Helper()
	for {
		if pr := p.progress(run); pr.Stage == runspec.StageApproval {
			return
		}
		if p.ctx.Err() != nil {
			p.t.Fatalf("run %s never awaited approval", run.GetID())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *peopleTest) progress(run client.WorkflowRun) runspec.Progress {
	p.t.Helper()
	v, err := p.tc.QueryWorkflow(p.ctx, run.GetID(), run.GetRunID(), runspec.ProgressQuery)
	if err != nil {
		p.t.Fatal(err)
	}
	var pr runspec.Progress
	if err := v.Get(&pr); err != nil {
		p.t.Fatal(err)
	}
	return pr
}

// answer sends ApproveUpdate as who, with a forged By, and returns the
// answer or the refusal's message.
func (p *peopleTest) answer(who string, run client.WorkflowRun, approve bool) (runspec.ApprovalAnswer, error) {
	h, err := p.as[who].UpdateWorkflow(p.ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
		UpdateName: runspec.ApproveUpdate, WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{runspec.ApprovalRequest{Approve: approve, By: "security-team@corp", Reason: "by " + who}}})
	var a runspec.ApprovalAnswer
	if err == nil {
		err = h.Get(p.ctx, &a)
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return a, errors.New(app.Message())
	}
	return a, err
}

// release reads the run's release and checks no forged name is in it.
func (p *peopleTest) release(project, workspace string) *engine.Release {
	p.t.Helper()
	r, err := p.h.backend.LatestRelease(p.ctx, project, workspace)
	if err != nil {
		p.t.Fatal(err)
	}
	data, _ := json.Marshal(r)
	for _, forged := range []string{"security-team@corp", "forged-starter@host"} {
		if strings.Contains(string(data), forged) {
			p.t.Errorf("release of %s/%s holds the forged name %s: %s", project, workspace, forged, data)
		}
	}
	return r
}

func names(as []engine.Actor) string {
	var s []string
	for _, a := range as {
		s = append(s, a.String())
	}
	return strings.Join(s, ", ")
}

func (p *peopleTest) audit(project string) string {
	p.t.Helper()
	es, err := p.h.backend.ListAudit(p.ctx, backend.AuditFilter{Project: project})
	if err != nil {
		p.t.Fatal(err)
	}
	var s []string
	for _, e := range es {
		s = append(s, fmt.Sprintf("%s %s %s", engine.DisplayName(e.Subject, e.Verified), e.Action, e.Result))
	}
	return strings.Join(s, "; ")
}

// TestApprovalsBoundToPeople: approvals and rejections under workspace
// approval policies, with subjects stamped in SubjectHeader as the kumo
// frontend stamps them.
func TestApprovalsBoundToPeople(t *testing.T) {
	p := newPeopleTest(t)

	t.Run("four eyes", func(t *testing.T) {
		p.t = t
		run := p.start("local:alice", "fe", "foureyes", false)
		p.awaitApproval(run)
		if _, err := p.answer("local:alice", run, true); err == nil || err.Error() !=
			"local:alice may not approve fe/foureyes run kumo/fe/foureyes: four-eyes approval — the run was started by local:alice" {
			t.Errorf("the starter's approval: %v", err)
		}
		// A request without a header never reaches a run through kumo's
		// frontend, which stamps every one (an unverified approver is
		// refused: runspec/approvalrules_test.go).
		if _, err := p.answer("local:dan", run, true); err == nil || !strings.Contains(err.Error(), "local:dan may not approve fe/foureyes: that needs role approver on fe/foureyes") {
			t.Errorf("a deployer's approval (refused by the frontend's policy): %v", err)
		}
		if a, err := p.answer("local:bob", run, true); err != nil || a.Approvals != 1 || a.Required != 1 {
			t.Fatalf("bob's approval: %+v, %v", a, err)
		}
		if err := run.Get(p.ctx, nil); err != nil {
			t.Fatalf("run: %v", err)
		}
		r := p.release("fe", "foureyes")
		if r.Phase != engine.PhaseSucceeded || r.StartedBy.String() != "local:alice" || names(r.Approvals) != "local:bob" || r.Approvals[0].Time.IsZero() {
			t.Errorf("release %s, started by %v, approved by %s", r.Phase, r.StartedBy, names(r.Approvals))
		}
		pr := p.progress(run)
		if pr.People == nil || pr.People.StartedBy.String() != "local:alice" || names(pr.People.Approvals) != "local:bob" {
			t.Errorf("progress people %+v", pr.People)
		}
		if got := p.audit("fe"); got != "local:bob approve allowed" {
			t.Errorf("audit %q", got)
		}
	})

	t.Run("two distinct approvers from a group", func(t *testing.T) {
		p.t = t
		run := p.start("local:alice", "two", "two", false)
		p.awaitApproval(run)
		if _, err := p.answer("oidc:carol", run, true); err == nil || err.Error() !=
			"oidc:carol may not approve two/two run kumo/two/two: approvers must be in group sre (the subject's groups: dev)" {
			t.Errorf("carol, not in sre: %v", err)
		}
		if a, err := p.answer("local:bob", run, true); err != nil || a.Approvals != 1 || a.Required != 2 {
			t.Fatalf("bob's approval: %+v, %v", a, err)
		}
		if pr := p.progress(run); pr.Stage != runspec.StageApproval || pr.Approval == nil || pr.Approval.Approvals != 1 {
			t.Errorf("after one approval of two: %s, %+v", pr.Stage, pr.Approval)
		}
		if _, err := p.answer("local:bob", run, true); err == nil || !strings.Contains(err.Error(), "local:bob already approved it; it needs 2 distinct approvers") {
			t.Errorf("bob again: %v", err)
		}
		if a, err := p.answer("local:alice", run, true); err != nil || a.Approvals != 2 {
			t.Fatalf("alice's approval: %+v, %v", a, err)
		}
		if err := run.Get(p.ctx, nil); err != nil {
			t.Fatalf("run: %v", err)
		}
		if r := p.release("two", "two"); r.Phase != engine.PhaseSucceeded || names(r.Approvals) != "local:bob, local:alice" {
			t.Errorf("release %s approved by %s", r.Phase, names(r.Approvals))
		}
	})

	t.Run("rejection and a forged name", func(t *testing.T) {
		p.t = t
		run := p.start("local:alice", "rej", "foureyes", false)
		p.awaitApproval(run)
		// bob's subject is stamped; his client claims to be security-team@corp.
		if _, err := p.answer("local:bob", run, false); err != nil {
			t.Fatalf("bob's rejection: %v", err)
		}
		err := run.Get(p.ctx, nil)
		if err == nil || !strings.Contains(err.Error(), "rejected by local:bob: by local:bob") {
			t.Errorf("rejected run: %v", err)
		}
		r := p.release("rej", "foureyes")
		if r.Phase != engine.PhaseFailed || r.RejectedBy.String() != "local:bob" || len(r.Approvals) != 0 {
			t.Errorf("release %s, rejected by %v, approved by %s", r.Phase, r.RejectedBy, names(r.Approvals))
		}
		if got := p.audit("rej"); got != "local:bob reject allowed" {
			t.Errorf("audit %q", got)
		}
	})

	t.Run("--yes", func(t *testing.T) {
		p.t = t
		// Four eyes: never, even for an approver.
		err := p.start("local:alice", "yes", "foureyes", true).Get(p.ctx, nil)
		if err == nil || !strings.Contains(err.Error(), "local:alice may not auto-approve (--yes) yes/foureyes run kumo/yes/foureyes: four-eyes approval") {
			t.Errorf("--yes under four eyes: %v", err)
		}
		if r := p.release("yes", "foureyes"); r.Phase != engine.PhaseFailed || len(r.Approvals) != 0 {
			t.Errorf("release %s approved by %s", r.Phase, names(r.Approvals))
		}
		// One approval required: a deployer may not, an approver may.
		err = p.start("local:dan", "yes", "one", true).Get(p.ctx, nil)
		if err == nil || !strings.Contains(err.Error(), "local:dan may not auto-approve (--yes) yes/one run kumo/yes/one: the approver role is required") {
			t.Errorf("--yes by a deployer: %v", err)
		}
		if err := p.start("local:alice", "yes", "one", true).Get(p.ctx, nil); err != nil {
			t.Errorf("--yes by an approver: %v", err)
		}
		if r := p.release("yes", "one"); r.Phase != engine.PhaseSucceeded || names(r.Approvals) != "local:alice" || r.StartedBy.String() != "local:alice" {
			t.Errorf("release %s started by %v approved by %s", r.Phase, r.StartedBy, names(r.Approvals))
		}
		if len(p.h.rt.applied) == 0 {
			t.Error("nothing applied")
		}
		if got := p.audit("yes"); got != "local:alice auto-approve denied; local:dan auto-approve denied; local:alice auto-approve allowed" {
			t.Errorf("audit %q", got)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		p.t = t
		run := p.start("local:alice", "cancel", "foureyes", false)
		p.awaitApproval(run)
		if err := p.as["local:dan"].SignalWorkflow(p.ctx, run.GetID(), run.GetRunID(), runspec.CancelSignal,
			runspec.Cancel{Reason: "not today", By: "security-team@corp"}); err != nil {
			t.Fatal(err)
		}
		_ = run.Get(p.ctx, nil)
		r := p.release("cancel", "foureyes")
		if r.CancelledBy.String() != "local:dan" || r.CancelledBy.Reason != "not today" {
			t.Errorf("release cancelled by %+v", r.CancelledBy)
		}
		if got := p.audit("cancel"); got != "local:dan cancel allowed" {
			t.Errorf("audit %q", got)
		}
		// A client's own stamp is replaced by the subject the frontend
		// authenticated: here the home's owner.
		run = p.start("", "cancel2", "default", false)
		p.awaitApproval(run)
		if err := p.as[""].SignalWorkflow(p.ctx, run.GetID(), run.GetRunID(), runspec.CancelSignal, runspec.Cancel{By: "eve@host"}); err != nil {
			t.Fatal(err)
		}
		_ = run.Get(p.ctx, nil)
		r, err := p.h.backend.LatestRelease(p.ctx, "cancel2", "default")
		if err != nil {
			t.Fatal(err)
		}
		if r.CancelledBy.String() != p.owner || r.StartedBy.String() != p.owner {
			t.Errorf("release started by %v, cancelled by %v", r.StartedBy, r.CancelledBy)
		}
	})

	t.Run("drift remediation as the check's starter", func(t *testing.T) {
		p.t = t
		// p/w requires one approval: the remediation's --yes is allowed only
		// because the check's starter, an approver, is its starter too.
		if err := p.h.backend.PutWorkspace(p.ctx, &engine.Workspace{Name: "w", Approval: engine.ApprovalPolicy{Required: 1}}); err != nil {
			t.Fatal(err)
		}
		a := cm("a")
		a.Attributes["data"] = map[string]any{"k": "v"}
		recordRelease(t, p.h, a)
		p.h.rt.mu.Lock()
		p.h.rt.objects[a.ID]["data"] = map[string]any{"k": "changed"}
		p.h.rt.mu.Unlock()
		check, err := p.as["local:alice"].ExecuteWorkflow(p.ctx, client.StartWorkflowOptions{ID: "kumo-drift/p/w/people", TaskQueue: runspec.TaskQueue},
			runspec.DriftWorkflow, runspec.DriftInput{Project: "p", Workspace: "w", Mode: drift.ModeRemediate})
		if err != nil {
			t.Fatal(err)
		}
		var res runspec.DriftResult
		if err := check.Get(p.ctx, &res); err != nil {
			t.Fatal(err)
		}
		if st := res.Remediation; st == nil || st.Outcome != drift.OutcomeSucceeded {
			t.Fatalf("remediation: %+v", st)
		}
		r := p.release("p", "w")
		if r.Revision != 2 || r.StartedBy.String() != "local:alice" || names(r.Approvals) != "local:alice" {
			t.Errorf("remediation release %d started by %v, approved by %s", r.Revision, r.StartedBy, names(r.Approvals))
		}
	})
}
