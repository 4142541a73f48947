package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// approvalChange names the workflow version from which a run that waits for
// approval takes the answer as ApproveUpdate (validated: only while waiting,
// only for the plan's digest), waits RunInput.ApprovalTimeout with its release
// in phase awaiting-approval, and previews again after an approval, ending
// with "plan is stale" if the plan changed. Runs started before it replay as
// they ran: they wait an hour for ApprovalSignal (or, now, the update).
const approvalChange = "approval-update"

const (
	// approvalTimeout is how long a run waits for approval by default.
	approvalTimeout = 24 * time.Hour
	// signalApprovalTimeout is how long runs older than approvalChange wait.
	signalApprovalTimeout = time.Hour
)

// ApproveUpdate is the Update that answers a run awaiting approval: it takes an
// ApprovalRequest and returns an ApprovalAnswer. Its validator refuses it, so
// the caller learns at once, when the run is not awaiting approval, has been
// answered, or the request's digest does not name the plan awaiting approval.
const ApproveUpdate = "approve"

// ApprovalRequest approves or rejects the plan a run awaits approval for.
type ApprovalRequest struct {
	Approve bool `json:"approve"`
	// Digest, when set, must name the plan awaiting approval (its digest, or
	// 12 or more of its first hex digits): the approval is of that plan only.
	Digest string `json:"digest,omitempty"`
	// Reason says why; a rejected run's release fails with it.
	Reason string `json:"reason,omitempty"`
	// By names who answered (user@host), for the run's record.
	By string `json:"by,omitempty"`
}

// ApprovalAnswer is what an accepted ApproveUpdate answers: the run's revision
// and the digest of the plan that was approved or rejected.
type ApprovalAnswer struct {
	Revision int    `json:"revision,omitempty"`
	Digest   string `json:"digest"`
}

// ApprovalState is a run's approval, in its Progress from the moment it waits.
type ApprovalState struct {
	// Digest is the plan's digest (engine.PlanDigest) the approval is bound to.
	Digest string `json:"digest"`
	// Deadline is when the run stops waiting and fails, in workflow time.
	Deadline time.Time `json:"deadline"`
	// Answer is set once the run was approved or rejected.
	Answer *ApprovalRequest `json:"answer,omitempty"`
}

// approvalGate is the workflow side of ApproveUpdate.
type approvalGate struct {
	// state is set while the run waits, and after; nil before.
	state *ApprovalState
	// waiting: the run accepts an answer now.
	waiting bool
}

// setApprovalHandler registers ApproveUpdate on every run, so a run that is
// not (or no longer) waiting refuses with a reason instead of "unknown update".
func (r *run) setApprovalHandler(ctx workflow.Context) error {
	return workflow.SetUpdateHandlerWithOptions(ctx, ApproveUpdate,
		func(ctx workflow.Context, req ApprovalRequest) (ApprovalAnswer, error) {
			if err := r.validateApproval(req); err != nil { // a second answer in the same task
				return ApprovalAnswer{}, err
			}
			answer := req
			r.gate.state.Answer = &answer
			r.gate.waiting = false
			return ApprovalAnswer{Revision: r.progress.Revision, Digest: r.gate.state.Digest}, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(req ApprovalRequest) error { return r.validateApproval(req) }})
}

// validateApproval refuses an answer the run cannot take. It only reads.
func (r *run) validateApproval(req ApprovalRequest) error {
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
	return nil
}

func answerVerb(a *ApprovalRequest) string {
	if a.Approve {
		return "approved"
	}
	return "rejected"
}

// awaitApproval waits for the plan to be approved, unless the run was started
// with AutoApprove or nothing would change. It reports whether a plan was
// approved by someone, so the caller checks it still holds before applying.
func (r *run) awaitApproval(ctx workflow.Context, key backend.ReleaseKey) (approved bool, _ error) {
	if r.in.AutoApprove || !anyChange(r.progress.Changes) {
		return false, nil
	}
	if workflow.GetVersion(ctx, approvalChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false, r.awaitApprovalSignal(ctx)
	}
	timeout := r.in.ApprovalTimeout
	if timeout <= 0 {
		timeout = approvalTimeout
	}
	err := workflow.ExecuteActivity(step(ctx, "await approval"), acts.SetReleasePhase,
		activities.SetPhaseInput{Key: key, Phase: engine.PhaseAwaitingApproval}).Get(ctx, nil)
	if err != nil {
		return false, err
	}
	r.openGate(ctx, timeout)
	answered, err := workflow.AwaitWithTimeout(ctx, timeout, func() bool { return r.gate.state.Answer != nil })
	r.gate.waiting = false
	switch {
	case err != nil || ctx.Err() != nil:
		return false, errors.New("cancelled while waiting for approval")
	case !answered:
		return false, fmt.Errorf("not approved within %s", timeout)
	case !r.gate.state.Answer.Approve:
		return false, rejection(r.gate.state.Answer)
	}
	return true, nil
}

// openGate starts accepting answers for the plan in r.progress.
func (r *run) openGate(ctx workflow.Context, timeout time.Duration) {
	r.progress.Stage = StageApproval
	r.gate.state = &ApprovalState{Digest: r.progress.Digest, Deadline: workflow.Now(ctx).Add(timeout)}
	r.progress.Approval = r.gate.state
	r.gate.waiting = true
}

// rejection is the error of a run whose plan was rejected.
func rejection(a *ApprovalRequest) error {
	msg := "rejected"
	if a.By != "" {
		msg += " by " + a.By
	}
	if a.Reason != "" {
		msg += ": " + a.Reason
	}
	return errors.New(msg)
}

// awaitApprovalSignal is how runs older than approvalChange wait, event for
// event (one timer of signalApprovalTimeout): for ApprovalSignal, or now
// ApproveUpdate.
func (r *run) awaitApprovalSignal(ctx workflow.Context) error {
	r.openGate(ctx, signalApprovalTimeout)
	ch := workflow.GetSignalChannel(ctx, ApprovalSignal)
	received, err := workflow.AwaitWithTimeout(ctx, signalApprovalTimeout, func() bool { return ch.Len() > 0 || r.gate.state.Answer != nil })
	r.gate.waiting = false
	var a Approval
	switch {
	case err != nil || ctx.Err() != nil:
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
	if !a.Approved {
		return errors.New("cancelled: the preview was not approved")
	}
	return nil
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
