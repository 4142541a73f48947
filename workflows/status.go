package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// control is how a run reports where it is (KumoStatus, current details) and
// how it stops when cancelled.
type control struct {
	// tracked: the run was started at statusChange or later.
	tracked bool
	// status is the KumoStatus last set; the client starts runs as running.
	status runspec.Status
	// work is the context activities run on. For tracked runs a cancel request
	// does not reach it: a resource in flight finishes and is recorded, and the
	// release is finished (and compensated) on it after a cancel.
	work workflow.Context
	// wait is the context of waits that a cancel must interrupt (approval).
	wait workflow.Context
	// stopped is set by a cancel (CancelSignal or Temporal's cancel request):
	// from then on no resource starts.
	stopped bool
	reason  string
	// signals are the subjects of the signals received (Interceptor).
	signals *signalSubjects
	// people are who started, answered or cancelled the run
	// (Progress.People points here).
	people engine.People
	// done and total count the resources of the current stage, for the details.
	done, total int
}

func (c *control) init(ctx workflow.Context) {
	c.work, c.wait, c.status = ctx, ctx, runspec.StatusRunning
	if changeVersion(ctx, statusChange, statusVersion) == workflow.DefaultVersion {
		return
	}
	c.tracked = true
	c.work, _ = workflow.NewDisconnectedContext(ctx)
	wait, stop := workflow.WithCancel(c.work)
	c.wait = wait
	signals := workflow.GetSignalChannel(ctx, runspec.CancelSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		var cancel runspec.Cancel
		got := false
		s := workflow.NewSelector(ctx)
		s.AddReceive(signals, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, &cancel); got = true })
		s.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {
			// `kumo run cancel` signals the reason first; a cancel request from
			// the Web UI or the temporal CLI comes without one.
			got = signals.ReceiveAsync(&cancel)
		})
		s.Select(ctx)
		c.stopped, c.reason = true, cancel.Reason
		c.people.CancelledBy = c.cancelledBy(ctx, got, cancel)
		stop()
	})
}

// cancelledBy is who cancelled the run: the subject of the CancelSignal taken
// (signalled), or, for a cancel request that came without one (the Web UI,
// the temporal CLI), nobody the run can name.
func (c *control) cancelledBy(ctx workflow.Context, signalled bool, cancel runspec.Cancel) *engine.Actor {
	who := runspec.Unverified("")
	if signalled {
		who = c.signals.next(runspec.CancelSignal, cancel.By)
	}
	a := who.Actor(workflow.Now(ctx), cancel.Reason)
	return &a
}

// stopErr is the error of a run stopped by a cancel.
func (c *control) stopErr() error {
	if c.reason == "" {
		return errors.New("cancelled (no reason given)")
	}
	return errors.New("cancelled: " + c.reason)
}

// isStopped is the stop test of a walk that a cancel ends.
func (c *control) isStopped() bool { return c.stopped }

// checkStop returns stopErr once the run was cancelled: the places between
// steps where a cancelled run ends.
func (c *control) checkStop() error {
	if c.stopped {
		return c.stopErr()
	}
	return nil
}

// errRejected ends an apply whose preview was not approved: a cancel by the
// user, not a failure.
var errRejected = errors.New("cancelled: the preview was not approved")

// finalStatus says how a run that ended with err ended.
func (c *control) finalStatus(err error) runspec.Status {
	switch {
	case err == nil:
		return runspec.StatusSucceeded
	case c.stopped || errors.Is(err, errRejected):
		return runspec.StatusCancelled
	}
	return runspec.StatusFailed
}

// setStatus keeps KumoStatus current; an upsert is one history event, so it is
// only sent when the status changes.
func (c *control) setStatus(s runspec.Status) {
	if !c.tracked || s == "" || s == c.status {
		return
	}
	c.status = s
	// An upsert fails only for an unregistered attribute, which the client
	// refuses to start runs without; a run is not failed over its label.
	_ = workflow.UpsertTypedSearchAttributes(c.work, StatusAttr.ValueSet(string(s)))
}

// stageStatus is the KumoStatus of a run in a stage (none for StageDone: the
// run's end sets it).
var stageStatus = map[runspec.Stage]runspec.Status{
	runspec.StageGenerating: runspec.StatusRunning, runspec.StagePlanning: runspec.StatusRunning, runspec.StagePreview: runspec.StatusRunning,
	runspec.StageApproval: runspec.StatusAwaitingApproval, runspec.StageApplying: runspec.StatusApplying, runspec.StageDestroying: runspec.StatusDestroying,
	runspec.StageCompensating: runspec.StatusCompensating,
}

// setStage moves the run to stage s with total resources to go through, and
// says so in KumoStatus and the current details.
func (r *run) setStage(s runspec.Stage, total int) {
	r.progress.Stage = s
	r.done, r.total = 0, total
	r.setStatus(stageStatus[s])
	r.showDetails()
}

// stepDone counts one resource of the current stage as done.
func (r *run) stepDone() {
	r.done++
	r.showDetails()
}

// showDetails sets the current details the Web UI shows on the run's page:
// the run's summary line, then the stage and how many resources are done.
func (r *run) showDetails() {
	if !r.tracked {
		return
	}
	var b strings.Builder
	b.WriteString(r.summaryLine() + "\n\n")
	b.WriteString(string(r.progress.Stage))
	switch r.progress.Stage {
	case runspec.StagePreview, runspec.StageApplying, runspec.StageDestroying, runspec.StageCompensating:
		fmt.Fprintf(&b, ": %d of %d resources done", r.done, r.total)
	case runspec.StageApproval:
		fmt.Fprintf(&b, ": %s to approve, plan %s", r.changeCounts(), engine.ShortDigest(r.progress.Digest))
	}
	if s := r.gate.state; s != nil && s.Required > 1 && s.Answer == nil && r.progress.Stage == runspec.StageApproval {
		fmt.Fprintf(&b, " (%d of %d approvals)", len(r.people.Approvals), s.Required)
	}
	if r.stopped {
		b.WriteString(" (cancelling: no resource starts)")
	}
	// Who started, approved, rejected or cancelled the run, and when: the
	// subjects the kumo server authenticated, or names marked unverified.
	b.WriteString("\n")
	for _, line := range r.people.Lines() {
		b.WriteString("\n- " + line)
	}
	b.WriteString(policyLines(r.progress.Policies))
	workflow.SetCurrentDetails(r.work, b.String())
}

// summaryLine is the run in one line: what its static summary said at the
// start ("apply shop/dev"), then the revision and, once previewed, the plan's
// counts: "apply shop/dev rev 7: 3 to create, 1 to update, 0 to delete".
// Temporal keeps a static summary as the run was started with, so the run
// says what it learned since here, first in its current details.
func (r *run) summaryLine() string {
	s := fmt.Sprintf("%s %s/%s", r.op, r.in.Project, r.in.Workspace)
	if r.progress.Revision > 0 {
		s += fmt.Sprintf(" rev %d", r.progress.Revision)
	}
	if r.progress.Changes == nil {
		return s
	}
	c := r.changeCounts()
	s += fmt.Sprintf(": %d to create, %d to update, %d to delete", c.Create, c.Update, c.Delete)
	if c.Adopt > 0 {
		s += fmt.Sprintf(", %d to adopt", c.Adopt)
	}
	return s
}

// changeCounts counts the preview's changes (r.progress.Changes) once per
// preview: the details are shown again after every resource, and counting
// 50,000 changes each time kept a workflow task busy for minutes.
func (r *run) changeCounts() runspec.ChangeCounts {
	ch := r.progress.Changes
	if len(ch) == 0 {
		return runspec.ChangeCounts{}
	}
	if r.counted.of != &ch[0] || r.counted.n != len(ch) {
		r.counted.of, r.counted.n, r.counted.counts = &ch[0], len(ch), runspec.CountChanges(ch)
	}
	return r.counted.counts
}

// recordChanges keeps the preview's counts in the run's memo, where a list of
// runs reads them.
func (r *run) recordChanges(changes []engine.Change) {
	if r.tracked {
		_ = workflow.UpsertMemo(r.work, map[string]any{runspec.ChangesMemo: runspec.CountChanges(changes)})
	}
}

// end sets the final KumoStatus and the result's status, and turns the error of
// a run cancelled through Temporal into a cancellation, so the Web UI shows the
// run as cancelled. Untracked runs end as they always did.
func (r *run) end(ctx workflow.Context, res runspec.Result, status runspec.Status, err error) (runspec.Result, error) {
	r.progress.Stage = runspec.StageDone
	if !r.tracked {
		return res, err
	}
	res.Status = status
	r.setStatus(status)
	r.showDetails()
	r.announceEnd(r.work, res, status, err) // r.work: on the run's queues, past a cancel
	if status == runspec.StatusCancelled && ctx.Err() != nil {
		return res, temporal.NewCanceledError(res)
	}
	return res, err
}
