package workflows

import (
	"encoding/json"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/runspec"
)

// Who made a request is read from runspec.SubjectHeader, which the kumo
// frontend stamps on every start, signal and update it lets through; a name
// in a request's arguments is never trusted. A request without the header
// (a Temporal that does not run kumo's frontend) is recorded under the name
// the client sent, unverified, and a workspace that requires approval refuses
// it.

// subjectOf is the subject of the request whose header ctx carries (a start,
// an update), or the client's name, unverified, when it carries none.
func subjectOf(ctx workflow.Context, clientName string) runspec.Subject {
	return subjectIn(interceptor.WorkflowHeader(ctx), clientName)
}

// subjectIn decodes SubjectHeader from header. The header is plain JSON
// ("json/plain"), never encrypted: the frontend writes it without the payload
// keys, so it is decoded here directly instead of through the data converter.
// A header that does not decode is treated as absent.
func subjectIn(header map[string]*commonpb.Payload, clientName string) runspec.Subject {
	p := header[runspec.SubjectHeader]
	if p == nil || string(p.GetMetadata()["encoding"]) != "json/plain" {
		return runspec.Unverified(clientName)
	}
	var s runspec.Subject
	if err := json.Unmarshal(p.GetData(), &s); err != nil || s.Name == "" {
		return runspec.Unverified(clientName)
	}
	return s
}

// signalSubjects are the subject of a run's start and those of the signals
// it received, by signal
// name, oldest first, for the run to take as it receives each signal from its
// channel. Signals reach the workflow code through channels, which carry no
// header; the workflow inbound interceptor (Interceptor) sees each signal's
// header as it is delivered, in the order the channel will give them.
type signalSubjects struct {
	// start is the subject of the run's start (none: Name empty). The SDK
	// hands the start's header to the inbound interceptor only, not to the
	// workflow function, so Interceptor keeps it here.
	start  runspec.Subject
	queued map[string][]runspec.Subject
	// startScope is the rollout scope of the run's start (a Rollout's;
	// empty for other runs), read from the start's header like start.
	startScope runspec.RolloutScope
}

// starter is who started the run, or the client's name, unverified, when the
// start carried no header or the worker runs without Interceptor.
func (s *signalSubjects) starter(clientName string) runspec.Subject {
	if s == nil || s.start.Name == "" {
		return runspec.Unverified(clientName)
	}
	return s.start
}

// next returns the subject of the oldest signal name not taken yet, or the
// client's name, unverified, when the signal carried no header or the worker
// runs without Interceptor.
func (s *signalSubjects) next(name, clientName string) runspec.Subject {
	if s == nil || len(s.queued[name]) == 0 {
		return runspec.Unverified(clientName)
	}
	q := s.queued[name]
	sub := q[0]
	s.queued[name] = q[1:]
	if sub.Name == "" {
		return runspec.Unverified(clientName)
	}
	return sub
}

type signalSubjectsKey struct{}

// signalsOf returns the run's signalSubjects (nil without Interceptor).
func signalsOf(ctx workflow.Context) *signalSubjects {
	s, _ := ctx.Value(signalSubjectsKey{}).(*signalSubjects)
	return s
}

// subjectSignals are the signals whose senders runs record.
var subjectSignals = map[string]bool{runspec.CancelSignal: true, runspec.ApprovalSignal: true,
	runspec.EnqueueSignal: true, runspec.DequeueSignal: true}

// Interceptor is the worker interceptor that hands runs the subjects of their
// start and of the signals they receive (a cancel, a legacy approval). Every worker that runs
// or queries kumo's workflows registers it (worker.Options.Interceptors);
// without it a signal's sender is recorded as the client's name, unverified.
var Interceptor interceptor.WorkerInterceptor = &subjectInterceptor{}

type subjectInterceptor struct {
	interceptor.WorkerInterceptorBase
}

func (*subjectInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &subjectInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next},
		signals: &signalSubjects{queued: map[string][]runspec.Subject{}}}
}

// subjectInbound exists once per workflow execution.
type subjectInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	signals *signalSubjects
}

func (i *subjectInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&subjectOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, signals: i.signals})
}

func (i *subjectInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	i.signals.start = subjectIn(interceptor.WorkflowHeader(ctx), "")
	i.signals.startScope = scopeIn(interceptor.WorkflowHeader(ctx))
	return i.Next.ExecuteWorkflow(workflow.WithValue(ctx, signalSubjectsKey{}, i.signals), in)
}

func (i *subjectInbound) HandleSignal(ctx workflow.Context, in *interceptor.HandleSignalInput) error {
	if subjectSignals[in.SignalName] {
		// An empty name stands for "no header": next falls back to the
		// client's name, which only the signal's argument holds.
		i.signals.queued[in.SignalName] = append(i.signals.queued[in.SignalName], subjectIn(interceptor.WorkflowHeader(ctx), ""))
	}
	return i.Next.HandleSignal(ctx, in)
}

// subjectOutbound starts a run's child workflows (a drift check's
// remediation) as the run's own starter: the child is kumo's doing on their
// behalf (they configured the schedule and its remediation), so its approval
// rules apply to them, as if they had started it.
type subjectOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	signals *signalSubjects
}

func (o *subjectOutbound) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...any) workflow.ChildWorkflowFuture {
	who := o.signals.start
	// A rollout starts each child as its starter with the roles the
	// frontend found on the child's workspace (childSubject), not those of
	// the rollout's own ID.
	if s, ok := ctx.Value(childSubjectKey{}).(runspec.Subject); ok {
		who = s
	}
	if header := interceptor.WorkflowHeader(ctx); header != nil && who.Name != "" {
		if data, err := json.Marshal(who); err == nil {
			header[runspec.SubjectHeader] = &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: data}
		}
	}
	return o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
}

// childSubjectKey holds, in a child's context, the subject the child is
// started as (see subjectOutbound).
type childSubjectKey struct{}

// scopeIn decodes runspec.RolloutScopeHeader from header; absent or not
// decodable, it is the empty scope (not verified).
func scopeIn(header map[string]*commonpb.Payload) runspec.RolloutScope {
	p := header[runspec.RolloutScopeHeader]
	var s runspec.RolloutScope
	if p == nil || string(p.GetMetadata()["encoding"]) != "json/plain" || json.Unmarshal(p.GetData(), &s) != nil {
		return runspec.RolloutScope{}
	}
	return s
}
