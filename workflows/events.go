package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/notify"
	"github.com/kumoproj/kumo/runspec"
)

// eventAttempts bounds the POSTs of one event to one sink: a sink that is
// down misses the event (its failure stays in the history, by the sink's
// name) rather than holding the run's outcome for long.
const eventAttempts = 4

// eventRetry gives a sink about ten seconds to come back.
var eventRetry = &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Second, MaximumAttempts: eventAttempts}

// runEvents is what a run knows of the sinks its events go to.
type runEvents struct {
	// on: the run announces its events (eventsChange).
	on bool
	// sinks lists the sinks once, at the run's first event (EventSinks, a
	// local activity).
	sinks workflow.Future
	// inflight counts the announcements whose deliveries have not ended.
	inflight int
}

// sinkLister is what listing and delivering need of a run: the workspace,
// and the one list of sinks shared by its events.
type sinkLister struct {
	project, workspace string
	events             *runEvents
}

// announce delivers e to every sink that wants it, each as one DeliverEvent
// ("notify <sink>: <event>" in the history), in the background: the caller
// goes on, and settle waits for the deliveries. They run on a disconnected
// context, so a cancelled run still tells of its cancel.
func (l sinkLister) announce(ctx workflow.Context, e notify.Event) {
	if !l.events.on {
		return
	}
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	l.events.inflight++
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer func() { l.events.inflight-- }()
		var sinks []string
		var started []workflow.Future
		for _, s := range l.list(ctx) {
			if !s.Wants(e.Event) {
				continue
			}
			sinks = append(sinks, s.Name)
			started = append(started, workflow.ExecuteActivity(deliverStep(ctx, s.Name, e.Event), acts.DeliverEvent,
				activities.DeliverInput{Project: l.project, Workspace: l.workspace, Sink: s.Name, Event: e}))
		}
		for i, f := range started {
			if err := f.Get(ctx, nil); err != nil {
				// The run's outcome does not depend on its audience.
				workflow.GetLogger(ctx).Warn("event not delivered", "event", e.Event, "sink", sinks[i], "error", err)
			}
		}
	})
}

// settle waits until every announcement's deliveries ended (each bounded by
// eventAttempts).
func (l sinkLister) settle(ctx workflow.Context) {
	if l.events.inflight > 0 {
		ctx, _ = workflow.NewDisconnectedContext(ctx)
		_ = workflow.Await(ctx, func() bool { return l.events.inflight == 0 })
	}
}

// list returns the workspace's and the operator's sinks, asked once per run
// (none when asking failed: the run goes on without telling).
func (l sinkLister) list(ctx workflow.Context) []activities.SinkRef {
	l.ask(ctx)
	var sinks []activities.SinkRef
	if err := l.events.sinks.Get(ctx, &sinks); err != nil {
		workflow.GetLogger(ctx).Warn("event sinks not listed", "error", err)
		return nil
	}
	return sinks
}

// ask starts listing the sinks, once per run.
func (l sinkLister) ask(ctx workflow.Context) {
	if l.events.sinks == nil {
		in := activities.SinksInput{Project: l.project, Workspace: l.workspace}
		if runtimeQueue(ctx) != "" {
			// The run's worker runs no step itself when its workspace
			// routes steps to a queue (see TestRuntimeStepsRunOnTheWorkspaceQueue).
			l.events.sinks = workflow.ExecuteActivity(step(ctx, "list event sinks"), acts.EventSinks, in)
		} else {
			// A local activity: one read of the stored workspace, which every
			// run does, is no step worth a round trip through the server.
			l.events.sinks = workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
				StartToCloseTimeout: shortCallTimeout, RetryPolicy: retryPolicy, Summary: "list event sinks",
			}), acts.EventSinks, in)
		}
	}
}

func deliverStep(ctx workflow.Context, sink, event string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 15 * time.Second,
		RetryPolicy:         eventRetry,
		Summary:             "notify " + sink + ": " + event,
	})
}

// initEvents decides whether this run announces its events: runs recorded
// before eventsChange replay without.
//
// Since sinksAheadChange a run whose steps are local to its worker asks for
// the sinks right away, a local step beside its first ones, so that its last
// event does not wait for that step after the finish. Asked on a context
// of its own: a cancel must not keep the run from telling of it.
func (r *run) initEvents(ctx workflow.Context) {
	r.events.on = changeVersion(ctx, eventsChange, eventsVersion) >= eventsVersion
	if r.events.on && runtimeQueue(r.work) == "" && changeVersion(ctx, sinksAheadChange, sinksAheadVersion) >= sinksAheadVersion {
		ctx, _ = workflow.NewDisconnectedContext(r.work) // as announceEnd's
		r.sinks().ask(ctx)
	}
}

func (r *run) sinks() sinkLister {
	return sinkLister{project: r.in.Project, workspace: r.in.Workspace, events: &r.events}
}

// eventRun is what every event says of this run.
func (r *run) eventRun(ctx workflow.Context) notify.Run {
	info := workflow.GetInfo(ctx).WorkflowExecution
	nr := notify.Run{WorkflowID: info.ID, RunID: info.RunID, Operation: r.op, Project: r.in.Project, Workspace: r.in.Workspace,
		Stack: r.in.Stack, Revision: r.progress.Revision}
	if s := r.people.StartedBy; s != nil {
		nr.StartedBy = s.String()
	}
	return nr
}

// eventPlan is the plan's counts and digest, once the run previewed.
func (r *run) eventPlan() *notify.Plan {
	if r.progress.Changes == nil {
		return nil
	}
	c := r.changeCounts()
	return &notify.Plan{Create: c.Create, Update: c.Update, Delete: c.Delete, Adopt: c.Adopt, Digest: r.progress.Digest}
}

// announceAwaiting tells the sinks the run awaits approval of its plan.
func (r *run) announceAwaiting(ctx workflow.Context) {
	if p := r.eventPlan(); p != nil {
		r.sinks().announce(ctx, notify.NewAwaitingApproval(r.eventRun(ctx), *p, workflow.Now(ctx)))
	}
}

// announceEnd tells the sinks how the run ended, and waits for every
// delivery of the run.
func (r *run) announceEnd(ctx workflow.Context, res runspec.Result, status runspec.Status, err error) {
	if !r.events.on {
		return
	}
	now := workflow.Now(ctx)
	switch status {
	case runspec.StatusSucceeded:
		r.sinks().announce(ctx, notify.NewSucceeded(r.eventRun(ctx), r.eventPlan(), now))
	case runspec.StatusCancelled:
		who, reason := "", r.reason
		switch {
		case r.people.CancelledBy != nil:
			who = actorName(*r.people.CancelledBy)
		case r.people.RejectedBy != nil:
			who, reason = actorName(*r.people.RejectedBy), "plan rejected"
			if rr := r.people.RejectedBy.Reason; rr != "" {
				reason += ": " + rr
			}
		}
		r.sinks().announce(ctx, notify.NewCancelled(r.eventRun(ctx), who, reason, now))
	default:
		// The release's error, as the run recorded it; the run's own error
		// repeats it after "revision N failed:".
		msg := res.Error
		if msg == "" && err != nil {
			msg = rootMessage(err)
		}
		if msg == "" {
			msg = "failed"
		}
		r.sinks().announce(ctx, notify.NewFailed(r.eventRun(ctx), msg, r.eventPlan(), now))
	}
	r.sinks().settle(ctx)
}

// actorName is who did it as a run shows them, "" when the run cannot
// name them (a cancel from the Temporal Web UI).
func actorName(a engine.Actor) string {
	if a.Name == "" {
		return ""
	}
	return a.String()
}

// driftSinks is where a drift check's events go besides its webhook: none
// for checks recorded before driftSinksChange.
func driftSinks(ctx workflow.Context, in runspec.DriftInput) sinkLister {
	on := changeVersion(ctx, driftSinksChange, driftSinksVersion) >= driftSinksVersion
	return sinkLister{project: in.Project, workspace: in.Workspace, events: &runEvents{on: on}}
}

// announceDrift tells the sinks of the check's events, each in the sink's
// shape (a Slack sink gets a Slack message).
func (l sinkLister) announceDrift(ctx workflow.Context, events ...drift.Event) {
	info := workflow.GetInfo(ctx).WorkflowExecution
	for _, e := range events {
		l.announce(ctx, notify.FromDrift(info.ID, info.RunID, e))
	}
}
