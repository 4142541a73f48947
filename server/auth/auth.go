// Package auth is the Temporal frontend's gatekeeper: a gRPC interceptor,
// installed on kumo's embedded server (server/embedded), that authenticates
// every call and authorizes it with the home's policy (package authz) before
// Temporal sees it.
//
// Authentication (authenticate.go): a client certificate verified by the
// frontend's TLS (the home's CA or the operator's), or a bearer token checked
// by the configured BearerVerifiers. The home's own certificates name the
// owner ("local:<user>"), Temporal's system worker (every right) and the
// Web UI server (a transport identity: no right unless the request carries
// its user's bearer token).
//
// Authorization (methods.go): an explicit table of every method of
// WorkflowService, OperatorService, AdminService, health and reflection; a
// method not in it is refused. Calls about a run are decided on the project
// and workspace in its kumo workflow ID (ids.go); starts only of kumo's
// workflow types on kumo's task queue; worker calls only for worker
// principals; lists narrowed to what the subject may view (query.go).
//
// An allowed request is rewritten (stamp.go): its Identity is the subject's
// name, and starts, signals, updates and schedules carry the subject in
// runspec.SubjectHeader, replacing whatever the client sent. Writes, allowed
// or denied, go to the Auditor.
package auth

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/runspec"
)

// BearerVerifier checks a bearer token ("authorization: Bearer <token>")
// and returns the subject it stands for; an error refuses the call.
type BearerVerifier interface {
	Verify(ctx context.Context, token string) (runspec.Subject, error)
}

// ErrNotMine is what a BearerVerifier may return (wrapped) for a token it
// does not handle (another issuer's, another format): it is left out of the
// refusal's message.
var ErrNotMine = errors.New("token not for this verifier")

// SessionVerifier checks the Web UI session cookie that the UI server
// forwards (a Cookie header's value) and returns whose session it is.
type SessionVerifier interface {
	Verify(cookieHeader string) (runspec.Subject, error)
}

// Entry is one audited decision.
type Entry struct {
	Time      time.Time
	Subject   string
	Action    authz.Action
	Project   string
	Workspace string
	// Target is the workflow or schedule ID (or the namespace) acted on.
	Target  string
	Allowed bool
	// Reason is the denial's message, or the method for an allowed call.
	Reason string
}

// Auditor records decisions on writes: starts, signals, updates, cancels,
// terminations, schedule and namespace changes.
type Auditor interface {
	Record(ctx context.Context, e Entry)
}

// Config is what the interceptor decides with.
type Config struct {
	// PKI is the home's: certificates it issued name the owner, the system
	// and the UI. Required.
	PKI *pki.PKI
	// Policy grants roles; nil: the owner only.
	Policy *authz.Policy
	// Verifiers check bearer tokens, in order; none: bearer tokens are
	// refused.
	Verifiers []BearerVerifier
	// Sessions, if set, checks the session cookie the Web UI server
	// forwards with a call it makes under its own certificate.
	Sessions SessionVerifier
	// Auditor, if set, records every write decision.
	Auditor Auditor
	// TaskQueues are the task queues kumo's workflows may be started on;
	// default runspec.TaskQueue.
	TaskQueues []string
	// AdminWorkflows are workflow types other than kumo's, each with the
	// task queue it runs on, that an admin of */* (and nobody else) may
	// start with any ID: for programs that test the server itself. Empty
	// for every server kumo runs.
	AdminWorkflows map[string]string
	// Quota limits the starts of every subject but the home's owner and
	// kumo's own principals; zero: no limit.
	Quota authz.Quota
}

// Interceptor authenticates and authorizes the frontend's calls.
type Interceptor struct {
	pki        *pki.PKI
	policy     *authz.Policy
	verifiers  []BearerVerifier
	sessions   SessionVerifier
	auditor    Auditor
	taskQueues map[string]bool
	adminTypes map[string]string
	quota      *authz.Limiter
	inFlight   atomic.Pointer[authz.InFlightCounter]
}

// New checks cfg and returns the interceptor.
func New(cfg Config) (*Interceptor, error) {
	if cfg.PKI == nil {
		return nil, errors.New("frontend authorization: no PKI")
	}
	if cfg.Policy == nil {
		cfg.Policy = authz.OwnerOnly(cfg.PKI.Owner())
	}
	if cfg.Policy.Owner != cfg.PKI.Owner() {
		return nil, errors.New("frontend authorization: the policy's owner is not the home's owner " + cfg.PKI.Owner())
	}
	if len(cfg.TaskQueues) == 0 {
		cfg.TaskQueues = []string{runspec.TaskQueue}
	}
	i := &Interceptor{pki: cfg.PKI, policy: cfg.Policy, verifiers: cfg.Verifiers, sessions: cfg.Sessions, auditor: cfg.Auditor, taskQueues: map[string]bool{}, adminTypes: cfg.AdminWorkflows}
	for _, q := range cfg.TaskQueues {
		i.taskQueues[q] = true
	}
	if cfg.Quota != (authz.Quota{}) {
		i.quota = authz.NewLimiter(cfg.Quota, i.countInFlight)
	}
	return i, nil
}

// Unary is the unary server interceptor.
func (i *Interceptor) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	c, err := i.check(ctx, info.FullMethod, req)
	if err != nil {
		return nil, err
	}
	resp, err := handler(ctx, req)
	if c != nil && err == nil {
		c.auditRefusedUpdate(resp)
	}
	return resp, err
}

// Stream is the stream server interceptor. Temporal installs it on every
// service; the internal services' own streams (history, matching) pass, as
// only the internode certificate reaches their ports.
func (i *Interceptor) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if internalService(info.FullMethod) {
		return handler(srv, ss)
	}
	if err := i.authorize(ss.Context(), info.FullMethod, nil); err != nil {
		return err
	}
	return handler(srv, ss)
}

func internalService(method string) bool {
	for _, p := range []string{"/temporal.server.api.historyservice.", "/temporal.server.api.matchingservice."} {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// authorize authenticates the caller, looks the method up and applies its
// rule; the request may be rewritten (identity, subject header, query).
func (i *Interceptor) authorize(ctx context.Context, method string, req any) error {
	_, err := i.check(ctx, method, req)
	return err
}

// check is authorize, returning the call it allowed (nil for the system's).
func (i *Interceptor) check(ctx context.Context, method string, req any) (*call, error) {
	p, err := i.authenticate(ctx)
	if err != nil {
		return nil, err
	}
	rule, ok := methods[method]
	if !ok {
		return nil, status.Errorf(codes.PermissionDenied, "%s may not call %s: kumo's frontend does not allow this method", p.subject.Name, method)
	}
	if p.system {
		return nil, nil
	}
	c := &call{i: i, ctx: ctx, p: p, method: method, req: req}
	if err := rule(c); err != nil {
		return nil, err
	}
	setIdentity(req, p.subject.Name, c.workerCall)
	return c, nil
}
