package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/runspec"
)

// Queue is a stack's run queue (runspec.QueueWorkflow): it takes queued
// runs (EnqueueSignal) in the order Temporal delivers them and starts them
// one at a time, each when the one before has ended, as a child with the
// stack's own ID (runspec.MutatingWorkflowID), so that each still takes the
// stack's lock, makes its own release, and previews and waits for approval
// when it starts. A run the queue did not start (a plain apply, a drift
// remediation) that holds the lock makes the head of the queue wait and try
// again. Each child is started as the subject whose EnqueueSignal the kumo
// frontend stamped, never the queue's starter, so a queue lets nobody run
// as someone else. A queue with nothing left ends after queueIdle; the next
// enqueue starts a new one.
func Queue(ctx workflow.Context, in runspec.QueueInput) error {
	info := workflow.GetInfo(ctx)
	if id := info.WorkflowExecution.ID; id != runspec.QueueWorkflowID(in.Project, in.Workspace) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("workflow %s is not the ID of the run queue of %s/%s (%s): refused",
			id, in.Project, in.Workspace, runspec.QueueWorkflowID(in.Project, in.Workspace)), "QueueRefused", nil)
	}
	if (len(in.Waiting) > 0 || len(in.Recent) > 0) && info.ContinuedExecutionRunID == "" {
		// Entries carry the subject that queued them: only the queue itself
		// may hand them on, never a client's start.
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("the run queue of %s/%s was started with entries in its input: refused (runs are queued with signal %s)",
			in.Project, in.Workspace, runspec.EnqueueSignal), "QueueRefused", nil)
	}
	q := &runQueue{in: in, st: runspec.QueueStatus{Project: in.Project, Workspace: in.Workspace, Recent: in.Recent}}
	for _, c := range in.Waiting {
		q.waiting = append(q.waiting, queued{entry: c.Entry, subject: c.Subject, status: c.Status})
	}
	if err := workflow.SetQueryHandler(ctx, runspec.QueueQuery, func() (runspec.QueueStatus, error) { return q.status(), nil }); err != nil {
		return err
	}
	return q.run(ctx)
}

// Bounds of a queue's life: how long it waits, empty, for another entry;
// how many finished entries it remembers (for a client waiting for its
// entry's run); how long the head waits between tries while a run the
// queue did not start holds the lock; how many events it lets its history
// reach before continuing as new.
const (
	queueIdle          = 5 * time.Minute
	queueRecent        = 50
	queueRetryFirst    = 2 * time.Second
	queueRetryMax      = 30 * time.Second
	queueHistoryEvents = 4000
	// queueMaxWaiting bounds how many runs wait in one queue.
	queueMaxWaiting = 100
)

type queued struct {
	entry   runspec.QueueEntry
	subject runspec.Subject
	status  runspec.QueuedRun
}

type runQueue struct {
	in      runspec.QueueInput
	st      runspec.QueueStatus
	waiting []queued
	// head is the entry whose run is starting or running (nil: none).
	head  *queued
	retry time.Duration
}

func (q *runQueue) status() runspec.QueueStatus {
	st := q.st
	st.Waiting = make([]runspec.QueuedRun, 0, len(q.waiting)+1)
	if q.head != nil {
		s := q.head.status
		s.SpecHash = q.head.entry.Input.SpecHash
		st.Waiting = append(st.Waiting, s)
	}
	for i, e := range q.waiting {
		s := e.status
		s.Position, s.SpecHash = i+1, e.entry.Input.SpecHash
		st.Waiting = append(st.Waiting, s)
	}
	return st
}

func (q *runQueue) run(ctx workflow.Context) error {
	enqueue := workflow.GetSignalChannel(ctx, runspec.EnqueueSignal)
	dequeue := workflow.GetSignalChannel(ctx, runspec.DequeueSignal)
	// Children are started from a context the queue's own cancellation
	// does not reach: a run that started is never cut off by its queue.
	childCtx, _ := workflow.NewDisconnectedContext(ctx)
	var (
		started workflow.Future // the head's start (GetChildWorkflowExecution)
		ended   workflow.Future // the head's run
		retry   workflow.Future // the next try while a run the queue did not start holds the lock
		idle    workflow.Future // the end of an empty queue's wait for more
		idleEnd bool
		noIdle  = func() {}
	)
	for {
		q.drain(ctx, enqueue, dequeue)
		if ctx.Err() != nil {
			return nil
		}
		if q.head == nil && retry == nil {
			if q.continueAsNew(ctx) {
				noIdle()
				q.drain(ctx, enqueue, dequeue)
				return workflow.NewContinueAsNewError(ctx, runspec.QueueWorkflow, q.carry())
			}
			if len(q.waiting) > 0 {
				noIdle()
				idle, idleEnd = nil, false
				head := q.waiting[0]
				q.waiting = q.waiting[1:]
				q.head = &head
				f := q.start(childCtx, head)
				started, ended = f.GetChildWorkflowExecution(), f
			}
		}
		if q.head == nil && len(q.waiting) == 0 && retry == nil {
			if idleEnd {
				return nil // empty for queueIdle, and drain found nothing new
			}
			if idle == nil {
				var ictx workflow.Context
				ictx, noIdle = workflow.WithCancel(ctx)
				idle = workflow.NewTimer(ictx, queueIdle)
			}
		}
		s := workflow.NewSelector(ctx)
		// Signals are taken by drain, at the top of the loop, in order.
		s.AddReceive(enqueue, func(workflow.ReceiveChannel, bool) {})
		s.AddReceive(dequeue, func(workflow.ReceiveChannel, bool) {})
		s.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		if idle != nil {
			s.AddFuture(idle, func(f workflow.Future) {
				idle = nil
				idleEnd = f.Get(ctx, nil) == nil
			})
		}
		if retry != nil {
			s.AddFuture(retry, func(workflow.Future) { retry = nil })
		}
		switch {
		case started != nil:
			s.AddFuture(started, func(f workflow.Future) {
				started = nil
				var exec workflow.Execution
				err := f.Get(ctx, &exec)
				var busy *temporal.ChildWorkflowExecutionAlreadyStartedError
				switch {
				case errors.As(err, &busy):
					// Someone else's run holds the lock: back in front, and
					// try again later.
					q.st.Blocked = fmt.Sprintf("a run the queue did not start holds %s; the queue starts its next run when it ends", runspec.MutatingWorkflowID(q.in.Project, q.in.Workspace))
					q.waiting = append([]queued{*q.head}, q.waiting...)
					q.head, ended = nil, nil
					q.retry = min(max(q.retry*2, queueRetryFirst), queueRetryMax)
					retry = workflow.NewTimer(ctx, q.retry)
				case err != nil:
					q.head.status.State, q.head.status.Error = runspec.QueueFailed, rootMessage(err)
					q.finish()
					ended = nil
				default:
					q.st.Blocked, q.retry = "", 0
					q.head.status.State, q.head.status.WorkflowID, q.head.status.RunID = runspec.QueueStarted, exec.ID, exec.RunID
				}
			})
		case ended != nil:
			s.AddFuture(ended, func(workflow.Future) {
				// However the run ended, the next one may go: its release
				// says how it ended.
				ended = nil
				q.finish()
			})
		}
		s.Select(ctx)
	}
}

// start starts e's run as a child with the stack's ID, as e's subject.
func (q *runQueue) start(ctx workflow.Context, e queued) workflow.ChildWorkflowFuture {
	in := e.entry.Input
	if in.Reason == "" {
		in.Reason = fmt.Sprintf("queued as %s at %s", e.entry.ID, e.status.QueuedAt.UTC().Format(time.RFC3339))
	}
	attrs := []temporal.SearchAttributeUpdate{
		ProjectAttr.ValueSet(in.Project),
		StackAttr.ValueSet(in.Stack),
		WorkspaceAttr.ValueSet(in.Workspace),
		OperationAttr.ValueSet(runspec.QueueableWorkflows[e.entry.WorkflowType]),
		StatusAttr.ValueSet(string(runspec.StatusRunning)),
	}
	if e.subject.Verified {
		// Filed under who queued it, as the frontend files a start: the
		// run counts in their quota of runs in flight.
		attrs = append(attrs, StartedByAttr.ValueSet(e.subject.Name))
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            runspec.MutatingWorkflowID(q.in.Project, q.in.Workspace),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		StaticSummary:         e.entry.Summary,
		StaticDetails:         fmt.Sprintf("Queued as %s by %s; started by run queue %s.", e.entry.ID, e.subject, runspec.QueueWorkflowID(q.in.Project, q.in.Workspace)),
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
	})
	// The child runs as the subject who queued it (subjectOutbound); one
	// queued without a verified subject records in.StartedBy, unverified,
	// as its direct start would have.
	who := e.subject
	if !who.Verified {
		who = runspec.Subject{}
	}
	return workflow.ExecuteChildWorkflow(workflow.WithValue(cctx, childSubjectKey{}, who), e.entry.WorkflowType, in)
}

// finish moves the head to the recent entries.
func (q *runQueue) finish() {
	if q.head == nil {
		return
	}
	q.remember(q.head.status)
	q.head = nil
}

func (q *runQueue) remember(s runspec.QueuedRun) {
	s.Position = 0
	q.st.Recent = append(q.st.Recent, s)
	if n := len(q.st.Recent) - queueRecent; n > 0 {
		q.st.Recent = q.st.Recent[n:]
	}
}

// drain takes every signal received so far, in order.
func (q *runQueue) drain(ctx workflow.Context, enqueue, dequeue workflow.ReceiveChannel) {
	for {
		var e runspec.QueueEntry
		if !enqueue.ReceiveAsync(&e) {
			break
		}
		q.add(ctx, e)
	}
	for {
		var d runspec.Dequeue
		if !dequeue.ReceiveAsync(&d) {
			break
		}
		q.remove(ctx, d)
	}
}

// add queues e as the subject whose signal carried it; an entry that is
// not well-formed, or whose ID the queue holds already (a client's retry),
// is dropped, which the client sees when it looks for its entry.
func (q *runQueue) add(ctx workflow.Context, e runspec.QueueEntry) {
	who := signalsOf(ctx).next(runspec.EnqueueSignal, e.Input.StartedBy)
	log := workflow.GetLogger(ctx)
	if err := e.Validate(q.in.Project, q.in.Workspace); err != nil {
		log.Warn("queue entry refused", "error", err, "by", who.String())
		return
	}
	if _, ok := q.status().Find(e.ID); ok {
		log.Warn("queue entry refused: its ID is queued already", "id", e.ID, "by", who.String())
		return
	}
	status := runspec.QueuedRun{ID: e.ID, Operation: runspec.QueueableWorkflows[e.WorkflowType], Stack: e.Input.Stack,
		QueuedBy: who.Actor(workflow.Now(ctx), ""), QueuedAt: workflow.Now(ctx)}
	if len(q.waiting) >= queueMaxWaiting {
		status.State, status.Error = runspec.QueueFailed, fmt.Sprintf("the run queue of %s/%s is full (%d runs wait)", q.in.Project, q.in.Workspace, queueMaxWaiting)
		q.remember(status)
		return
	}
	status.State = runspec.QueueWaiting
	q.waiting = append(q.waiting, queued{entry: e, subject: who, status: status})
}

// remove takes d's entry out of the queue before it starts; the one
// starting or running is not the queue's to stop (`kumo run cancel` its run).
func (q *runQueue) remove(ctx workflow.Context, d runspec.Dequeue) {
	who := signalsOf(ctx).next(runspec.DequeueSignal, d.By)
	for i, e := range q.waiting {
		if e.entry.ID != d.ID {
			continue
		}
		q.waiting = append(q.waiting[:i:i], q.waiting[i+1:]...)
		by := who.Actor(workflow.Now(ctx), d.Reason)
		e.status.State, e.status.RemovedBy = runspec.QueueRemoved, &by
		q.remember(e.status)
		return
	}
}

// continueAsNew reports whether the history is long enough to start afresh.
func (q *runQueue) continueAsNew(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > queueHistoryEvents
}

// carry is the input the queue continues as new with.
func (q *runQueue) carry() runspec.QueueInput {
	in := runspec.QueueInput{Project: q.in.Project, Workspace: q.in.Workspace, Recent: q.st.Recent}
	for _, e := range q.waiting {
		in.Waiting = append(in.Waiting, runspec.QueuedCarry{Entry: e.entry, Subject: e.subject, Status: e.status})
	}
	return in
}
