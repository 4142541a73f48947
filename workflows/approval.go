package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

const (
	// approvalTimeout is how long a run waits for approval by default.
	approvalTimeout = 24 * time.Hour
	// signalApprovalTimeout is how long runs older than approvalChange wait.
	signalApprovalTimeout = time.Hour
)

// approvalGate is the workflow side of ApproveUpdate.
type approvalGate struct {
	// state is set while the run waits, and after; nil before.
	state *runspec.ApprovalState
	// waiting: the run accepts an answer now.
	waiting bool
}

// setApprovalHandler registers ApproveUpdate on every run, so a run that is
// not (or no longer) waiting refuses with a reason instead of "unknown update".
// Who answers is the update's subject (SubjectHeader), never req.By.
func (r *run) setApprovalHandler(ctx workflow.Context) error {
	return workflow.SetUpdateHandlerWithOptions(ctx, runspec.ApproveUpdate,
		func(ctx workflow.Context, req runspec.ApprovalRequest) (runspec.ApprovalAnswer, error) {
			who := subjectOf(ctx, req.By)
			if err := r.validateApproval(who, req); err != nil { // a second answer in the same task
				return runspec.ApprovalAnswer{}, err
			}
			r.takeAnswer(ctx, who, req)
			return runspec.ApprovalAnswer{Revision: r.progress.Revision, Digest: r.gate.state.Digest,
				Approvals: len(r.people.Approvals), Required: r.gate.state.Required}, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, req runspec.ApprovalRequest) error {
			return r.validateApproval(subjectOf(ctx, req.By), req)
		}})
}

// validateApproval refuses an answer the run cannot take, or who may not
// give under the workspace's approval policy. It only reads. A refusal
// leaves no trace in the run's history (validators run before an update is
// recorded): the kumo frontend, which sees the refusal in the update's
// response, audits it.
func (r *run) validateApproval(who runspec.Subject, req runspec.ApprovalRequest) error {
	if s := r.gate.state; s != nil && s.Answer != nil {
		return fmt.Errorf("the run was already %s", answerVerb(s.Answer))
	}
	if !r.gate.waiting {
		return fmt.Errorf("the run is not awaiting approval: it is %s", r.progress.Stage)
	}
	if req.Digest != "" && !engine.MatchDigest(r.gate.state.Digest, req.Digest) {
		return fmt.Errorf("plan digest %s does not match the plan awaiting approval (%s): the plan you reviewed is not this run's; review its preview again",
			req.Digest, engine.ShortDigest(r.gate.state.Digest))
	}
	return r.rules.MayAnswer(who, req.Approve, r.people.Approvals)
}

// takeAnswer records an answer validateApproval accepted: an approval counts
// towards the approvals the plan needs, and the gate closes once there are
// enough; a rejection closes it at once.
func (r *run) takeAnswer(ctx workflow.Context, who runspec.Subject, req runspec.ApprovalRequest) {
	actor := who.Actor(workflow.Now(ctx), req.Reason)
	if req.Approve {
		r.people.Approvals = append(r.people.Approvals, actor)
		r.gate.state.Approvals = len(r.people.Approvals)
		r.audit(ctx, who, "approve", true, fmt.Sprintf("approval %d of %d, plan %s", len(r.people.Approvals), max(1, r.gate.state.Required), engine.ShortDigest(r.gate.state.Digest)))
		if !r.rules.Approved(r.people.Approvals) {
			r.showDetails()
			return // waits for the other approvers
		}
	} else {
		r.people.RejectedBy = &actor
		r.audit(ctx, who, "reject", true, req.Reason)
	}
	answer := req
	answer.By = "" // who the run recorded, never the name the client sent
	if actor.Name != "" {
		answer.By = actor.String()
	}
	r.gate.state.Answer = &answer
	r.gate.waiting = false
}

// audit notes for the audit log that who did action (allowed or not) on this
// run. The entries go with the next release step; their IDs come from the run
// and their order, so sending them again appends nothing.
func (r *run) audit(ctx workflow.Context, who runspec.Subject, action string, allowed bool, reason string) {
	r.auditAt(ctx, workflow.Now(ctx), who.Name, who.Verified, action, allowed, reason)
}

func (r *run) auditAt(ctx workflow.Context, at time.Time, name string, verified bool, action string, allowed bool, reason string) {
	info := workflow.GetInfo(ctx).WorkflowExecution
	res := backend.AuditAllowed
	if !allowed {
		res = backend.AuditDenied
	}
	if name == "" {
		name = "unknown"
	}
	r.audits = append(r.audits, backend.AuditEntry{
		ID: fmt.Sprintf("%s-%d", info.RunID, len(r.audits)+1), Time: at, Subject: name, Verified: verified,
		Action: action, Project: r.in.Project, Workspace: r.in.Workspace, Target: info.ID, Result: res, Reason: reason,
	})
}

func answerVerb(a *runspec.ApprovalRequest) string {
	if a.Approve {
		return "approved"
	}
	return "rejected"
}

// approve waits for the plan in r.progress to be approved, unless the run was
// started with AutoApprove or nothing would change; a plan someone approved is
// previewed again (checkPlanStillHolds) before anything is applied. Activities
// run on ctx; a cancel interrupts only the wait (r.wait).
func (r *run) approve(ctx workflow.Context, key backend.ReleaseKey, changes []engine.Change, node func(i int) activities.NodeInput) error {
	if !anyChange(changes) {
		return nil
	}
	if r.in.AutoApprove {
		if err := r.autoApprove(ctx); err != nil || !r.policyApproval || r.rules.Approved(r.people.Approvals) {
			return err
		}
	}
	if changeVersion(ctx, approvalChange, approvalVersion) == workflow.DefaultVersion {
		return r.awaitApprovalSignal()
	}
	if err := r.awaitApproval(ctx, key); err != nil {
		return err
	}
	if err := r.checkStop(); err != nil {
		return err
	}
	return r.checkPlanStillHolds(ctx, changes, node)
}

// checkAutoApprove refuses, before anything is planned or previewed, a run
// started with AutoApprove (--yes) whose starter the workspace's policy does
// not let approve alone.
func (r *run) checkAutoApprove(ctx workflow.Context) error {
	if !r.in.AutoApprove {
		return nil
	}
	if err := r.rules.MayAutoApprove(r.starter); err != nil {
		r.audit(ctx, r.starter, "auto-approve", false, err.Error())
		return err
	}
	return nil
}

// autoApprove records the approval given at the start (--yes), which
// checkAutoApprove allowed.
func (r *run) autoApprove(ctx workflow.Context) error {
	if r.policyApproval && r.rules.MayAnswer(r.starter, true, nil) != nil {
		return nil // the policies' approvers do not include the starter: all of them answer
	}
	actor := r.starter.Actor(workflow.Now(ctx), "approved at start (--yes)")
	r.people.Approvals = append(r.people.Approvals, actor)
	if r.rules.Policy.Enforced() {
		r.audit(ctx, r.starter, "auto-approve", true, actor.Reason)
	}
	return nil
}

// awaitApproval waits up to RunInput.ApprovalTimeout for an answer
// (ApproveUpdate), with the release in phase awaiting-approval.
func (r *run) awaitApproval(ctx workflow.Context, key backend.ReleaseKey) error {
	timeout := r.in.ApprovalTimeout
	if timeout <= 0 {
		timeout = approvalTimeout
	}
	err := workflow.ExecuteActivity(step(ctx, "await approval"), acts.SetReleasePhase,
		activities.SetPhaseInput{Key: key, Phase: engine.PhaseAwaitingApproval}).Get(ctx, nil)
	if err != nil {
		return err
	}
	r.openGate(timeout)
	r.announceAwaiting(ctx)
	answered, err := workflow.AwaitWithTimeout(r.wait, timeout, func() bool { return r.gate.state.Answer != nil })
	r.gate.waiting = false
	switch {
	case err != nil || r.wait.Err() != nil:
		return errors.New("cancelled while waiting for approval")
	case !answered:
		return fmt.Errorf("not approved within %s", timeout)
	case !r.gate.state.Answer.Approve:
		return rejection(r.gate.state.Answer)
	}
	return nil
}

// openGate starts accepting answers for the plan in r.progress, and says the
// run awaits approval (KumoStatus, current details).
func (r *run) openGate(timeout time.Duration) {
	r.setStage(runspec.StageApproval, 0)
	r.gate.state = &runspec.ApprovalState{Digest: r.progress.Digest, Deadline: workflow.Now(r.work).Add(timeout), Required: r.rules.Policy.Required}
	r.progress.Approval = r.gate.state
	r.gate.waiting = true
}

// rejectedError ends a run whose plan was rejected: like errRejected, a
// cancel by the user, not a failure; its message says who and why.
type rejectedError struct{ msg string }

func (e rejectedError) Error() string        { return e.msg }
func (e rejectedError) Is(target error) bool { return target == errRejected }

// rejection is the error of a run whose plan was rejected.
func rejection(a *runspec.ApprovalRequest) error {
	msg := "rejected"
	if a.By != "" {
		msg += " by " + a.By
	}
	if a.Reason != "" {
		msg += ": " + a.Reason
	}
	return rejectedError{msg}
}

// awaitApprovalSignal is how runs older than approvalChange wait, event for
// event (one timer of signalApprovalTimeout): for ApprovalSignal, or now
// ApproveUpdate.
func (r *run) awaitApprovalSignal() error {
	r.openGate(signalApprovalTimeout)
	ch := workflow.GetSignalChannel(r.wait, runspec.ApprovalSignal)
	received, err := workflow.AwaitWithTimeout(r.wait, signalApprovalTimeout, func() bool { return ch.Len() > 0 || r.gate.state.Answer != nil })
	r.gate.waiting = false
	var a runspec.Approval
	switch {
	case err != nil || r.wait.Err() != nil:
		return errors.New("cancelled while waiting for approval")
	case !received:
		return fmt.Errorf("not approved within %s", signalApprovalTimeout)
	case r.gate.state.Answer != nil:
		if !r.gate.state.Answer.Approve {
			return rejection(r.gate.state.Answer)
		}
		return nil
	}
	ch.ReceiveAsync(&a)
	who := r.signals.next(runspec.ApprovalSignal, "")
	actor := who.Actor(workflow.Now(r.work), "")
	if !a.Approved {
		r.people.RejectedBy = &actor
		r.audit(r.work, who, "reject", true, "approval signal")
		return errRejected
	}
	r.people.Approvals = append(r.people.Approvals, actor)
	r.audit(r.work, who, "approve", true, "approval signal")
	return nil
}

func anyChange(changes []engine.Change) bool {
	for _, c := range changes {
		if c.Action != engine.UnChanged {
			return true
		}
	}
	return false
}

// checkPlanStillHolds previews again after an approval, and fails the run if
// the plan it would apply now is not the one approved: what is live changed
// while the run waited, and nobody approved the new plan.
func (r *run) checkPlanStillHolds(ctx workflow.Context, approved []engine.Change, node func(i int) activities.NodeInput) error {
	now, err := r.preview(ctx, node)
	if err != nil {
		return err
	}
	approvedDigest, nowDigest := engine.PlanDigest(approved), engine.PlanDigest(now)
	if nowDigest == approvedDigest {
		return nil
	}
	return fmt.Errorf("plan is stale: approved %s (%s), now %s (%s): %s; apply again to review the new plan",
		engine.PlanSummary(approved), engine.ShortDigest(approvedDigest), engine.PlanSummary(now), engine.ShortDigest(nowDigest),
		engine.PlanDifference(approved, now))
}
