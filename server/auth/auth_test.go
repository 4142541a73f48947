package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	schedulepb "go.temporal.io/api/schedule/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	updatepb "go.temporal.io/api/update/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/api/adminservice/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	grpc_reflection_v1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	grpc_reflection_v1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/internal/tlstest"
	"github.com/kumoproj/kumo/runspec"
)

const testPolicy = `
grants:
  - role: viewer
    subjects: [alice]
    scopes: ["shop/*"]
  - role: deployer
    subjects: [bob]
    scopes: ["shop/dev"]
  - role: approver
    subjects: ["group:leads"]
    scopes: ["*/prod"]
  - role: worker
    subjects: [remote-worker]
    scopes: ["*/*"]
`

// fixture is an interceptor over a real home PKI and an operator CA, and
// contexts as the frontend's TLS hands them over.
type fixture struct {
	i       *Interceptor
	home    *pki.PKI
	op      *tlstest.CA
	audit   *memAudit
	opCerts map[string]*x509.Certificate
}

type memAudit struct {
	mu      sync.Mutex
	entries []Entry
}

func (m *memAudit) Record(_ context.Context, e Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = append(m.entries, e)
}

func newFixture(t testing.TB, verifiers ...BearerVerifier) *fixture {
	t.Helper()
	home, err := pki.Open(t.TempDir(), pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := authz.Parse([]byte(testPolicy), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policy.Owner = home.Owner()
	f := &fixture{home: home, op: tlstest.NewCA(t, "operator"), audit: &memAudit{}, opCerts: map[string]*x509.Certificate{}}
	if f.i, err = New(Config{PKI: home, Policy: policy, Verifiers: verifiers, Auditor: f.audit}); err != nil {
		t.Fatal(err)
	}
	return f
}

// ctxOf is the context of a call over TLS with the certificate in file,
// verified under roots as the frontend does.
func ctxOf(t testing.TB, certFile, keyFile string, roots *x509.CertPool) context.Context {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Fatal(err)
	}
	return peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: tls.ConnectionState{VerifiedChains: chains}}})
}

func (f *fixture) owner(t testing.TB) context.Context {
	p := f.home.OwnerCert()
	return ctxOf(t, p.CertFile, p.KeyFile, f.home.Pool())
}

func (f *fixture) homeCert(t testing.TB, p pki.Pair) context.Context {
	return ctxOf(t, p.CertFile, p.KeyFile, f.home.Pool())
}

func (f *fixture) as(t testing.TB, name string) context.Context {
	t.Helper()
	p := f.op.Issue(t, name)
	pem, err := os.ReadFile(f.op.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	return ctxOf(t, p.CertFile, p.KeyFile, roots)
}

func code(err error) codes.Code { return status.Code(err) }

func start(id, typ, queue string) *workflowservice.StartWorkflowExecutionRequest {
	return &workflowservice.StartWorkflowExecutionRequest{
		Namespace: "default", WorkflowId: id, WorkflowType: &commonpb.WorkflowType{Name: typ},
		TaskQueue: &taskqueuepb.TaskQueue{Name: queue}, Identity: "forged@host",
		Header: &commonpb.Header{Fields: map[string]*commonpb.Payload{runspec.SubjectHeader: {Data: []byte(`{"name":"security-team@corp","verified":true}`)}}},
	}
}

func stamped(t *testing.T, h *commonpb.Header) runspec.Subject {
	t.Helper()
	p := h.GetFields()[runspec.SubjectHeader]
	if p == nil {
		t.Fatal("no subject header")
	}
	if enc := string(p.GetMetadata()["encoding"]); enc != "json/plain" {
		t.Errorf("subject header encoding %q", enc)
	}
	var s runspec.Subject
	if err := json.Unmarshal(p.GetData(), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAuthenticate(t *testing.T) {
	f := newFixture(t)
	info := wfs + "GetSystemInfo"
	if err := f.i.authorize(f.owner(t), info, &workflowservice.GetSystemInfoRequest{}); err != nil {
		t.Errorf("owner: %v", err)
	}
	if err := f.i.authorize(context.Background(), info, &workflowservice.GetSystemInfoRequest{}); code(err) != codes.Unauthenticated {
		t.Errorf("no certificate: %v", err)
	}
	if err := f.i.authorize(f.homeCert(t, f.home.UI()), info, &workflowservice.GetSystemInfoRequest{}); code(err) != codes.Unauthenticated {
		t.Errorf("the UI's certificate alone: %v", err)
	}
	if err := f.i.authorize(f.as(t, "alice"), info, &workflowservice.GetSystemInfoRequest{}); err != nil {
		t.Errorf("operator-issued alice: %v", err)
	}
	for _, reserved := range []string{f.home.Owner(), "kumo-system", "system:kumo-system", "group:sre"} {
		if err := f.i.authorize(f.as(t, reserved), info, &workflowservice.GetSystemInfoRequest{}); code(err) != codes.Unauthenticated {
			t.Errorf("operator certificate naming %q: %v", reserved, err)
		}
	}
	// Without verifiers, a bearer token is refused, even with the owner's certificate.
	ctx := metadata.NewIncomingContext(f.owner(t), metadata.Pairs("authorization", "Bearer kumo_abc"))
	if err := f.i.authorize(ctx, info, &workflowservice.GetSystemInfoRequest{}); code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "accepts no bearer tokens") {
		t.Errorf("bearer without verifiers: %v", err)
	}
}

// tokens is a verifier of fixed tokens: what a real one (kumo tokens, OIDC)
// answers for the interceptor to act on.
type tokens map[string]runspec.Subject

func (v tokens) Verify(_ context.Context, token string) (runspec.Subject, error) {
	if !strings.HasPrefix(token, "kumo_") {
		return runspec.Subject{}, ErrNotMine
	}
	s, ok := v[token]
	if !ok {
		return runspec.Subject{}, errors.New("unknown or revoked token")
	}
	return s, nil
}

func TestBearer(t *testing.T) {
	tok := tokens{"kumo_bob": {Name: "bob"}, "kumo_lead": {Name: "lena", Groups: []string{"leads"}}}
	f := newFixture(t, tok)
	tok["kumo_fake"] = runspec.Subject{Name: f.home.Owner()} // a token may not pass for the owner
	with := func(tok string) context.Context {
		return metadata.NewIncomingContext(f.homeCert(t, f.home.UI()), metadata.Pairs("authorization", "Bearer "+tok))
	}
	req := start("kumo/shop/dev", runspec.ApplyWorkflow, runspec.TaskQueue)
	if err := f.i.authorize(with("kumo_bob"), wfs+"StartWorkflowExecution", req); err != nil {
		t.Errorf("bob's token through the UI: %v", err)
	}
	if s := stamped(t, req.Header); s.Name != "bob" || !s.Verified {
		t.Errorf("stamped %+v", s)
	}
	if err := f.i.authorize(with("kumo_revoked"), wfs+"GetSystemInfo", &workflowservice.GetSystemInfoRequest{}); code(err) != codes.Unauthenticated {
		t.Errorf("revoked token: %v", err)
	}
	if err := f.i.authorize(with("eyJ.jwt.x"), wfs+"GetSystemInfo", &workflowservice.GetSystemInfoRequest{}); code(err) != codes.Unauthenticated {
		t.Errorf("a token no verifier takes: %v", err)
	}
	if err := f.i.authorize(with("kumo_fake"), wfs+"GetSystemInfo", &workflowservice.GetSystemInfoRequest{}); code(err) != codes.Unauthenticated {
		t.Errorf("a token naming the home's owner: %v", err)
	}
	sig := &workflowservice.SignalWorkflowExecutionRequest{WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "kumo/shop/prod"}, SignalName: runspec.ApprovalSignal}
	if err := f.i.authorize(with("kumo_lead"), wfs+"SignalWorkflowExecution", sig); err != nil {
		t.Errorf("a lead (group) approving prod: %v", err)
	}
	if s := stamped(t, sig.Header); s.Name != "lena" || strings.Join(s.Roles, ",") != "approver,viewer" {
		t.Errorf("stamped %+v", s)
	}
}

func TestStart(t *testing.T) {
	f := newFixture(t)
	bob := f.as(t, "bob")
	m := wfs + "StartWorkflowExecution"
	req := start("kumo/shop/dev", runspec.ApplyWorkflow, runspec.TaskQueue)
	if err := f.i.authorize(bob, m, req); err != nil {
		t.Fatalf("bob applies shop/dev: %v", err)
	}
	if req.Identity != "bob" {
		t.Errorf("identity %q, want bob", req.Identity)
	}
	if s := stamped(t, req.Header); s.Name != "bob" || !s.Verified || strings.Join(s.Roles, ",") != "deployer,viewer" {
		t.Errorf("stamped %+v", s)
	}
	for name, c := range map[string]struct {
		ctx  context.Context
		req  *workflowservice.StartWorkflowExecutionRequest
		want string
	}{
		"viewer applies":        {f.as(t, "alice"), start("kumo/shop/dev", runspec.ApplyWorkflow, runspec.TaskQueue), "alice may not apply shop/dev: that needs role deployer on shop/dev (alice has viewer on shop/*)"},
		"deployer of dev, prod": {bob, start("kumo/shop/prod", runspec.ApplyWorkflow, runspec.TaskQueue), "bob may not apply shop/prod: that needs role deployer on shop/prod (bob has deployer on shop/dev)"},
		"own workflow type":     {bob, start("kumo/shop/dev", "Evil", runspec.TaskQueue), `workflow type "Evil" is not kumo's`},
		"own task queue":        {bob, start("kumo/shop/dev", runspec.ApplyWorkflow, "mine"), `task queue "mine" is not kumo's`},
		"squatting the lock":    {bob, start("kumo/shop/dev", runspec.DriftWorkflow, runspec.TaskQueue), `workflow ID "kumo/shop/dev" is not the ID of a DriftCheck run`},
		"generate as apply ID":  {bob, start("kumo/shop/dev/generate/1", runspec.ApplyWorkflow, runspec.TaskQueue), "is not the ID of a Apply run"},
		"owner's own type":      {f.owner(t), start("evil", "Evil", "evil"), `workflow type "Evil" is not kumo's`},
		"stranger":              {f.as(t, "mallory"), start("kumo/shop/dev", runspec.PreviewWorkflow, runspec.TaskQueue), "is not the ID of a Preview run"},
	} {
		err := f.i.authorize(c.ctx, m, c.req)
		if code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want PermissionDenied with %q", name, err, c.want)
		}
	}
	// A deployer may not terminate a run by starting over it, nor schedule
	// it with cron, nor take its first task, nor send callbacks, nor file it
	// under another project.
	for name, mod := range map[string]func(r *workflowservice.StartWorkflowExecutionRequest){
		"terminate existing": func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowIdConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING
		},
		"terminate if running": func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowIdReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING
		},
		"cron":  func(r *workflowservice.StartWorkflowExecutionRequest) { r.CronSchedule = "* * * * *" },
		"eager": func(r *workflowservice.StartWorkflowExecutionRequest) { r.RequestEagerExecution = true },
		"callbacks": func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.CompletionCallbacks = []*commonpb.Callback{{}}
		},
		"other project's attributes": func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.SearchAttributes = &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{runspec.AttrProject: {Data: []byte(`"blog"`)}}}
		},
	} {
		r := start("kumo/shop/dev", runspec.ApplyWorkflow, runspec.TaskQueue)
		mod(r)
		if err := f.i.authorize(bob, m, r); code(err) != codes.PermissionDenied {
			t.Errorf("%s: %v", name, err)
		}
	}
	var denied, allowed int
	for _, e := range f.audit.entries {
		if e.Subject == "" || e.Action == "" {
			t.Errorf("audit entry without subject or action: %+v", e)
		}
		if e.Allowed {
			allowed++
		} else {
			denied++
		}
	}
	if allowed == 0 || denied < 14 {
		t.Errorf("audited %d allowed, %d denied", allowed, denied)
	}
}

func TestRunsByID(t *testing.T) {
	f := newFixture(t)
	alice, bob := f.as(t, "alice"), f.as(t, "bob")
	exec := func(id string) *commonpb.WorkflowExecution { return &commonpb.WorkflowExecution{WorkflowId: id} }
	cases := []struct {
		ctx    context.Context
		method string
		req    any
		ok     bool
	}{
		{alice, "DescribeWorkflowExecution", &workflowservice.DescribeWorkflowExecutionRequest{Execution: exec("kumo/shop/prod")}, true},
		{alice, "GetWorkflowExecutionHistory", &workflowservice.GetWorkflowExecutionHistoryRequest{Execution: exec("kumo/shop/dev/preview/1")}, true},
		{alice, "QueryWorkflow", &workflowservice.QueryWorkflowRequest{Execution: exec("kumo-drift/shop/dev/1")}, true},
		{alice, "DescribeWorkflowExecution", &workflowservice.DescribeWorkflowExecutionRequest{Execution: exec("kumo/blog/prod")}, false},
		{alice, "DescribeWorkflowExecution", &workflowservice.DescribeWorkflowExecutionRequest{Execution: exec("someone-elses")}, false},
		{alice, "RequestCancelWorkflowExecution", &workflowservice.RequestCancelWorkflowExecutionRequest{WorkflowExecution: exec("kumo/shop/dev")}, false},
		{bob, "RequestCancelWorkflowExecution", &workflowservice.RequestCancelWorkflowExecutionRequest{WorkflowExecution: exec("kumo/shop/dev")}, true},
		{bob, "SignalWorkflowExecution", &workflowservice.SignalWorkflowExecutionRequest{WorkflowExecution: exec("kumo/shop/dev"), SignalName: runspec.CancelSignal}, true},
		{bob, "SignalWorkflowExecution", &workflowservice.SignalWorkflowExecutionRequest{WorkflowExecution: exec("kumo/shop/dev"), SignalName: runspec.ApprovalSignal}, false},
		{bob, "SignalWorkflowExecution", &workflowservice.SignalWorkflowExecutionRequest{WorkflowExecution: exec("kumo/shop/dev"), SignalName: "other"}, false},
		{bob, "TerminateWorkflowExecution", &workflowservice.TerminateWorkflowExecutionRequest{WorkflowExecution: exec("kumo/shop/dev")}, false},
		{bob, "ResetWorkflowExecution", &workflowservice.ResetWorkflowExecutionRequest{WorkflowExecution: exec("kumo/shop/dev")}, false},
		{f.owner(t), "TerminateWorkflowExecution", &workflowservice.TerminateWorkflowExecutionRequest{WorkflowExecution: exec("kumo/shop/dev")}, true},
		{bob, "UpdateWorkflowExecution", &workflowservice.UpdateWorkflowExecutionRequest{WorkflowExecution: exec("kumo/shop/dev"), Request: &updatepb.Request{Input: &updatepb.Input{Name: runspec.ApproveUpdate}, Meta: &updatepb.Meta{Identity: "forged"}}}, false},
		{bob, "PollWorkflowTaskQueue", &workflowservice.PollWorkflowTaskQueueRequest{TaskQueue: &taskqueuepb.TaskQueue{Name: runspec.TaskQueue}}, false},
		{bob, "PollActivityTaskQueue", &workflowservice.PollActivityTaskQueueRequest{TaskQueue: &taskqueuepb.TaskQueue{Name: runspec.TaskQueue}}, false},
		{f.as(t, "remote-worker"), "PollActivityTaskQueue", &workflowservice.PollActivityTaskQueueRequest{TaskQueue: &taskqueuepb.TaskQueue{Name: runspec.TaskQueue}}, true},
		{f.owner(t), "PollActivityTaskQueue", &workflowservice.PollActivityTaskQueueRequest{}, true},
		{f.as(t, "remote-worker"), "DescribeWorkflowExecution", &workflowservice.DescribeWorkflowExecutionRequest{Execution: exec("kumo/shop/prod")}, false},
		{bob, "RegisterNamespace", &workflowservice.RegisterNamespaceRequest{Namespace: "x"}, false},
		{f.owner(t), "RegisterNamespace", &workflowservice.RegisterNamespaceRequest{Namespace: "x"}, true},
		{bob, "DeleteSchedule", &workflowservice.DeleteScheduleRequest{ScheduleId: "kumo-drift/shop/dev"}, false},
		{alice, "DescribeSchedule", &workflowservice.DescribeScheduleRequest{ScheduleId: "kumo-drift/shop/dev"}, true},
		{alice, "DescribeSchedule", &workflowservice.DescribeScheduleRequest{ScheduleId: "kumo-drift/blog/dev"}, false},
		{bob, "StartBatchOperation", &workflowservice.StartBatchOperationRequest{}, false},
		{alice, "ListOpenWorkflowExecutions", &workflowservice.ListOpenWorkflowExecutionsRequest{}, false},
		{f.owner(t), "NoSuchMethod", &workflowservice.GetSystemInfoRequest{}, false},
	}
	for _, c := range cases {
		err := f.i.authorize(c.ctx, wfs+c.method, c.req)
		if (err == nil) != c.ok {
			t.Errorf("%s %+v: %v, want allowed=%v", c.method, c.req, err, c.ok)
		}
		if err != nil && code(err) != codes.PermissionDenied {
			t.Errorf("%s: code %v, want PermissionDenied", c.method, code(err))
		}
	}
	// An approver's update is stamped, and its identity is the subject's.
	up := &workflowservice.UpdateWorkflowExecutionRequest{WorkflowExecution: exec("kumo/shop/dev"), Request: &updatepb.Request{Input: &updatepb.Input{Name: runspec.ApproveUpdate}, Meta: &updatepb.Meta{Identity: "forged"}}}
	if err := f.i.authorize(f.owner(t), wfs+"UpdateWorkflowExecution", up); err != nil {
		t.Fatal(err)
	}
	if s := stamped(t, up.Request.Input.Header); s.Name != f.home.Owner() || !s.HasRole("approver") {
		t.Errorf("stamped %+v", s)
	}
	if up.Request.Meta.Identity != f.home.Owner() {
		t.Errorf("update identity %q", up.Request.Meta.Identity)
	}
}

func TestSchedules(t *testing.T) {
	f := newFixture(t)
	action := func(id, typ string) *schedulepb.Schedule {
		return &schedulepb.Schedule{Action: &schedulepb.ScheduleAction{Action: &schedulepb.ScheduleAction_StartWorkflow{StartWorkflow: &workflowpb.NewWorkflowExecutionInfo{
			WorkflowId: id, WorkflowType: &commonpb.WorkflowType{Name: typ}, TaskQueue: &taskqueuepb.TaskQueue{Name: runspec.TaskQueue},
		}}}}
	}
	ok := &workflowservice.CreateScheduleRequest{ScheduleId: "kumo-drift/shop/dev", Schedule: action("kumo-drift/shop/dev/scheduled", runspec.DriftWorkflow)}
	if err := f.i.authorize(f.owner(t), wfs+"CreateSchedule", ok); err != nil {
		t.Fatal(err)
	}
	if s := stamped(t, ok.Schedule.Action.GetStartWorkflow().Header); s.Name != f.home.Owner() {
		t.Errorf("stamped %+v", s)
	}
	for name, req := range map[string]*workflowservice.CreateScheduleRequest{
		"another type":    {ScheduleId: "kumo-drift/shop/dev", Schedule: action("kumo-drift/shop/dev/scheduled", "Evil")},
		"apply on timer":  {ScheduleId: "kumo-drift/shop/dev", Schedule: action("kumo/shop/dev", runspec.ApplyWorkflow)},
		"other workspace": {ScheduleId: "kumo-drift/shop/dev", Schedule: action("kumo-drift/shop/prod/scheduled", runspec.DriftWorkflow)},
	} {
		if err := f.i.authorize(f.owner(t), wfs+"CreateSchedule", req); code(err) != codes.PermissionDenied {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := f.i.authorize(f.as(t, "bob"), wfs+"CreateSchedule", &workflowservice.CreateScheduleRequest{ScheduleId: "kumo-drift/shop/dev", Schedule: action("kumo-drift/shop/dev/scheduled", runspec.DriftWorkflow)}); code(err) != codes.PermissionDenied {
		t.Errorf("a deployer creates a schedule: %v", err)
	}
}

func TestListsAreNarrowed(t *testing.T) {
	f := newFixture(t)
	req := &workflowservice.ListWorkflowExecutionsRequest{Query: "KumoStatus = 'running'"}
	if err := f.i.authorize(f.as(t, "alice"), wfs+"ListWorkflowExecutions", req); err != nil {
		t.Fatal(err)
	}
	if want := "((KumoProject = 'shop')) AND (KumoStatus = 'running')"; req.Query != want {
		t.Errorf("query %q, want %q", req.Query, want)
	}
	owner := &workflowservice.ListWorkflowExecutionsRequest{Query: "KumoStatus = 'running' ORDER BY StartTime"}
	if err := f.i.authorize(f.owner(t), wfs+"ListWorkflowExecutions", owner); err != nil || owner.Query != "KumoStatus = 'running' ORDER BY StartTime" {
		t.Errorf("owner's query changed to %q (%v)", owner.Query, err)
	}
	empty := &workflowservice.CountWorkflowExecutionsRequest{}
	if err := f.i.authorize(f.as(t, "bob"), wfs+"CountWorkflowExecutions", empty); err != nil || empty.Query != "(KumoProject = 'shop' AND KumoWorkspace = 'dev')" {
		t.Errorf("bob's count: %q %v", empty.Query, err)
	}
	if err := f.i.authorize(f.as(t, "mallory"), wfs+"ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{}); code(err) != codes.PermissionDenied {
		t.Errorf("a subject without roles lists: %v", err)
	}
	if err := f.i.authorize(f.as(t, "alice"), wfs+"ListSchedules", &workflowservice.ListSchedulesRequest{Query: "KumoStack = ') OR (1=1'"}); err != nil {
		t.Errorf("a quote inside a string is harmless: %v", err)
	}
}

// TestDescribeQueue: a viewer of some project may describe kumo's task
// queue (the Web UI's run page does), not another queue; a subject without
// roles may not; a worker may.
func TestDescribeQueue(t *testing.T) {
	f := newFixture(t)
	req := func(q string) *workflowservice.DescribeTaskQueueRequest {
		return &workflowservice.DescribeTaskQueueRequest{Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: q}}
	}
	if err := f.i.authorize(f.as(t, "alice"), wfs+"DescribeTaskQueue", req(runspec.TaskQueue)); err != nil {
		t.Errorf("a viewer describes kumo's queue: %v", err)
	}
	if err := f.i.authorize(f.as(t, "alice"), wfs+"DescribeTaskQueue", req("other")); code(err) != codes.PermissionDenied {
		t.Errorf("a viewer describes another queue: %v", err)
	}
	if err := f.i.authorize(f.as(t, "mallory"), wfs+"DescribeTaskQueue", req(runspec.TaskQueue)); code(err) != codes.PermissionDenied {
		t.Errorf("a subject without roles describes kumo's queue: %v", err)
	}
	if err := f.i.authorize(f.as(t, "remote-worker"), wfs+"DescribeTaskQueue", req("other")); err != nil {
		t.Errorf("a worker describes a queue: %v", err)
	}
}

// TestQueryInjection: nothing a scoped subject writes escapes the filter.
func TestQueryInjection(t *testing.T) {
	scopes := []authz.Scope{{Project: "shop", Workspace: "*"}}
	for _, q := range []string{
		") OR (1=1",
		"KumoProject = 'x') OR (KumoProject = 'blog'",
		"1=1) OR (KumoProject = 'blog'",
		"KumoProject = 'blog' -- ",
		"KumoProject = 'blog' /* ",
		"KumoProject = 'blog' # ",
		"KumoProject = 'blog'; DROP",
		`KumoProject = 'a\') OR (1=1 --'`,
		"KumoProject = 'unterminated",
		"(KumoProject = 'blog'",
		"KumoStatus = 'x' ORDER BY StartTime",
		"KumoStatus = 'x' order\tby StartTime",
		"KumoStatus = \"x\") OR (\"1\" = \"1\"",
	} {
		got, err := scopeQuery(q, scopes)
		if err == nil {
			t.Errorf("scopeQuery(%q) = %q, want refused", q, got)
		}
	}
	for _, q := range []string{
		"KumoStatus = 'running'",
		"(KumoStatus = 'running' OR KumoStatus = 'failed') AND KumoWorkspace = 'prod'",
		"KumoStack = 'it''s (odd)'",
		"`KumoProject` = 'shop'",
		"WorkflowId STARTS_WITH 'kumo/shop/'",
	} {
		got, err := scopeQuery(q, scopes)
		if err != nil || !strings.HasPrefix(got, "((KumoProject = 'shop')) AND (") {
			t.Errorf("scopeQuery(%q) = %q, %v", q, got, err)
		}
	}
}

// TestEveryMethodHasARule: every method of the services the frontend
// serves is in the table, so none is allowed or refused by accident.
func TestEveryMethodHasARule(t *testing.T) {
	for _, svc := range frontendServices() {
		for _, m := range fullNames(svc) {
			if _, ok := methods[m]; !ok {
				t.Errorf("%s has no rule in methods (methods.go)", m)
			}
		}
	}
	for m := range methods {
		if !known(m) {
			t.Errorf("methods holds %s, which no service defines", m)
		}
	}
}

// frontendServices are the services the frontend registers.
func frontendServices() []protoreflect.ServiceDescriptor {
	return []protoreflect.ServiceDescriptor{
		workflowservice.File_temporal_api_workflowservice_v1_service_proto.Services().Get(0),
		operatorservice.File_temporal_api_operatorservice_v1_service_proto.Services().Get(0),
		adminservice.File_temporal_server_api_adminservice_v1_service_proto.Services().Get(0),
		grpc_health_v1.File_grpc_health_v1_health_proto.Services().Get(0),
		grpc_reflection_v1.File_grpc_reflection_v1_reflection_proto.Services().Get(0),
		grpc_reflection_v1alpha.File_grpc_reflection_v1alpha_reflection_proto.Services().Get(0),
	}
}

func known(method string) bool {
	for _, svc := range frontendServices() {
		if slices.Contains(fullNames(svc), method) {
			return true
		}
	}
	return false
}

// oneSession accepts exactly one session cookie, as the server's signed
// sessions accept only the ones they issued.
type oneSession struct{ cookie, owner string }

func (o oneSession) Verify(h string) (runspec.Subject, error) {
	if !strings.Contains(h, "kumo_session="+o.cookie) {
		return runspec.Subject{}, errors.New("not signed by this server")
	}
	return runspec.Subject{Name: o.owner, Verified: true}, nil
}

// TestUISession: the UI server's certificate gets its user's rights from the
// session cookie it forwards, and none without one; a cookie sent under any
// other certificate is no credential.
func TestUISession(t *testing.T) {
	home, err := pki.Open(t.TempDir(), pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	i, err := New(Config{PKI: home, Sessions: oneSession{"good", home.Owner()}})
	if err != nil {
		t.Fatal(err)
	}
	ui := home.UI()
	uiCtx := ctxOf(t, ui.CertFile, ui.KeyFile, home.Pool())
	list := func(ctx context.Context) error {
		return i.authorize(ctx, wfs+"ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{})
	}
	if err := list(metadata.NewIncomingContext(uiCtx, metadata.Pairs("cookie", "a=b; kumo_session=good"))); err != nil {
		t.Errorf("UI with the owner's session: %v", err)
	}
	for name, ctx := range map[string]context.Context{
		"no cookie":     uiCtx,
		"forged cookie": metadata.NewIncomingContext(uiCtx, metadata.Pairs("cookie", "kumo_session=forged")),
	} {
		if err := list(ctx); code(err) != codes.Unauthenticated {
			t.Errorf("UI with %s: %v", name, err)
		}
	}
}

// TestWorkerIdentity: a worker's call keeps its own description after the
// authenticated subject; anyone else's Identity is the subject alone.
func TestWorkerIdentity(t *testing.T) {
	f := newFixture(t)
	poll := &workflowservice.PollActivityTaskQueueRequest{Identity: "worker-3@host"}
	if err := f.i.authorize(f.owner(t), wfs+"PollActivityTaskQueue", poll); err != nil {
		t.Fatal(err)
	}
	if want := f.home.Owner() + " (worker-3@host)"; poll.Identity != want {
		t.Errorf("poll identity %q, want %q", poll.Identity, want)
	}
	cancel := &workflowservice.RequestCancelWorkflowExecutionRequest{WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "kumo/shop/dev"}, Identity: "security-team@corp"}
	if err := f.i.authorize(f.as(t, "bob"), wfs+"RequestCancelWorkflowExecution", cancel); err != nil {
		t.Fatal(err)
	}
	if cancel.Identity != "bob" {
		t.Errorf("cancel identity %q, want bob", cancel.Identity)
	}
}

// TestBearerWithoutCertificate: with bearer verifiers, the frontend's TLS
// lets a client in without a certificate; the interceptor then takes a
// valid bearer token as the credential and refuses a call with neither.
// Without verifiers a certificate-less call is refused as before.
func TestBearerWithoutCertificate(t *testing.T) {
	f := newFixture(t, tokens{"kumo_bob": {Name: "bob"}})
	bare := peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: tls.ConnectionState{}}})
	withTok := func(tok string) context.Context {
		return metadata.NewIncomingContext(bare, metadata.Pairs("authorization", "Bearer "+tok))
	}
	req := start("kumo/shop/dev", runspec.ApplyWorkflow, runspec.TaskQueue)
	if err := f.i.authorize(withTok("kumo_bob"), wfs+"StartWorkflowExecution", req); err != nil {
		t.Errorf("bob's token without a certificate: %v", err)
	}
	if s := stamped(t, req.Header); s.Name != "bob" || !s.Verified {
		t.Errorf("stamped %+v", s)
	}
	if err := f.i.authorize(withTok("kumo_nobody"), wfs+"GetSystemInfo", &workflowservice.GetSystemInfoRequest{}); code(err) != codes.Unauthenticated {
		t.Errorf("an unknown token without a certificate: %v", err)
	}
	if err := f.i.authorize(bare, wfs+"GetSystemInfo", &workflowservice.GetSystemInfoRequest{}); code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "no credential") {
		t.Errorf("neither certificate nor token: %v", err)
	}
	none := newFixture(t)
	if err := none.i.authorize(bare, wfs+"GetSystemInfo", &workflowservice.GetSystemInfoRequest{}); code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "mutual TLS only") {
		t.Errorf("no verifiers, no certificate: %v", err)
	}
}

// TestGCSchedule: the collection of kumo's records (runspec.GCWorkflow) is an
// admin's of */*: its schedule, and a start by hand; its schedule starts
// nothing else, and it starts under its own ID form only.
func TestGCSchedule(t *testing.T) {
	f := newFixture(t)
	action := func(id, typ string) *schedulepb.Schedule {
		return &schedulepb.Schedule{Action: &schedulepb.ScheduleAction{Action: &schedulepb.ScheduleAction_StartWorkflow{StartWorkflow: &workflowpb.NewWorkflowExecutionInfo{
			WorkflowId: id, WorkflowType: &commonpb.WorkflowType{Name: typ}, TaskQueue: &taskqueuepb.TaskQueue{Name: runspec.TaskQueue},
		}}}}
	}
	gc := func() *workflowservice.CreateScheduleRequest {
		return &workflowservice.CreateScheduleRequest{ScheduleId: runspec.GCScheduleID, Schedule: action(runspec.GCWorkflowID, runspec.GCWorkflow)}
	}
	if err := f.i.authorize(f.owner(t), wfs+"CreateSchedule", gc()); err != nil {
		t.Fatalf("the owner creates the GC schedule: %v", err)
	}
	if err := f.i.authorize(f.owner(t), wfs+"StartWorkflowExecution", start(runspec.GCWorkflowID, runspec.GCWorkflow, runspec.TaskQueue)); err != nil {
		t.Errorf("the owner starts a collection: %v", err)
	}
	for _, who := range []string{"alice", "bob"} {
		if err := f.i.authorize(f.as(t, who), wfs+"CreateSchedule", gc()); code(err) != codes.PermissionDenied {
			t.Errorf("%s creates the GC schedule: %v", who, err)
		}
		if err := f.i.authorize(f.as(t, who), wfs+"StartWorkflowExecution", start(runspec.GCWorkflowID, runspec.GCWorkflow, runspec.TaskQueue)); code(err) != codes.PermissionDenied {
			t.Errorf("%s starts a collection: %v", who, err)
		}
	}
	for name, req := range map[string]*workflowservice.CreateScheduleRequest{
		"an apply on the GC schedule": {ScheduleId: runspec.GCScheduleID, Schedule: action("kumo/shop/dev", runspec.ApplyWorkflow)},
		"a collection under a run ID": {ScheduleId: runspec.GCScheduleID, Schedule: action("kumo/shop/dev", runspec.GCWorkflow)},
	} {
		if err := f.i.authorize(f.owner(t), wfs+"CreateSchedule", req); code(err) != codes.PermissionDenied {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := f.i.authorize(f.owner(t), wfs+"StartWorkflowExecution", start("kumo/shop/dev", runspec.GCWorkflow, runspec.TaskQueue)); code(err) != codes.PermissionDenied {
		t.Errorf("a collection under an apply's ID: %v", err)
	}
}
