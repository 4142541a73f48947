package runspec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

// RoleApprover is the role that may approve or reject plans (admin holds it
// too).
const RoleApprover = "approver"

// ApprovalRules decide who may answer one run's plan, under its workspace's
// approval policy. They are plain data and a pure decision, so the workflow
// (its update validator) and the tests use the same rules.
type ApprovalRules struct {
	Policy    engine.ApprovalPolicy
	Project   string
	Workspace string
	// Run is the run's workflow ID, for the messages.
	Run string
	// Starter started the run.
	Starter engine.Actor
}

// ApprovalDeniedError is a refused approval, rejection or --yes: it names who,
// what and where, and why.
type ApprovalDeniedError struct {
	Subject   string
	Action    string // "approve", "reject", "auto-approve"
	Project   string
	Workspace string
	Run       string
	Reason    string
}

func (e *ApprovalDeniedError) Error() string {
	return fmt.Sprintf("%s may not %s %s/%s run %s: %s", e.Subject, e.Action, e.Project, e.Workspace, e.Run, e.Reason)
}

func (r ApprovalRules) deny(who, action, reason string) error {
	return &ApprovalDeniedError{Subject: who, Action: action, Project: r.Project, Workspace: r.Workspace, Run: r.Run, Reason: reason}
}

// MayAnswer decides whether who may approve (approve) or reject the plan,
// given the approvals accepted so far. Without a policy anyone may, as
// before policies existed. With one, the answer needs a verified subject
// holding the approver role, in one of the policy's groups when it names
// some; an approval must also come from someone other than the starter under
// four-eyes, and from someone who has not approved yet. A rejection by an
// allowed subject stands, the starter's included (they may cancel anyway).
func (r ApprovalRules) MayAnswer(who Subject, approve bool, approvals []engine.Actor) error {
	if !r.Policy.Enforced() {
		return nil
	}
	action := "reject"
	if approve {
		action = "approve"
	}
	if err := r.mayApprove(who, action); err != nil {
		return err
	}
	if !approve {
		return nil
	}
	if r.Policy.FourEyes && who.Is(&r.Starter) {
		return r.deny(who.String(), action, "four-eyes approval — the run was started by "+r.Starter.String())
	}
	for _, a := range approvals {
		if who.Is(&a) {
			return r.deny(who.String(), action, fmt.Sprintf("%s already approved it; it needs %d distinct approvers", a.Name, r.Policy.Required))
		}
	}
	return nil
}

// mayApprove checks what an approver and a rejecter both need.
func (r ApprovalRules) mayApprove(who Subject, action string) error {
	p := r.Policy
	switch {
	case !who.Verified:
		return r.deny(who.String(), action, "the workspace requires approval by an authenticated subject, and this request carries no subject stamped by the kumo server")
	case !who.HasRole(RoleApprover):
		return r.deny(who.String(), action, fmt.Sprintf("the approver role is required (the subject's roles here: %s)", listOrNone(who.Roles)))
	case len(p.Groups) > 0 && !who.InGroup(p.Groups):
		return r.deny(who.String(), action, fmt.Sprintf("approvers must be in group %s (the subject's groups: %s)", strings.Join(p.Groups, " or "), listOrNone(who.Groups)))
	}
	return nil
}

// MayAutoApprove decides whether the starter may skip approval (--yes). Under
// a policy only a verified approver who could approve alone may: never under
// four-eyes, nor when more than one approval is required.
func (r ApprovalRules) MayAutoApprove(starter Subject) error {
	p := r.Policy
	if !p.Enforced() {
		return nil
	}
	const action = "auto-approve (--yes)"
	switch {
	case p.FourEyes:
		return r.deny(starter.String(), action, "four-eyes approval — someone other than the starter must approve the plan")
	case p.Required > 1:
		return r.deny(starter.String(), action, fmt.Sprintf("the workspace requires %d distinct approvers", p.Required))
	}
	return r.mayApprove(starter, action)
}

// Approved reports whether approvals are enough to go on (one without a
// policy).
func (r ApprovalRules) Approved(approvals []engine.Actor) bool {
	return len(approvals) >= max(1, r.Policy.Required)
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(slices.Values(xs)), ", ")
}
