package runspec

import "time"

// Approval answers the preview of an apply or destroy as ApprovalSignal, for
// runs older than ApproveUpdate.
type Approval struct {
	Approved bool `json:"approved"`
}

// ApprovalRequest approves or rejects the plan a run awaits approval for.
type ApprovalRequest struct {
	Approve bool `json:"approve"`
	// Digest, when set, must name the plan awaiting approval (its digest, or
	// 12 or more of its first hex digits): the approval is of that plan only.
	Digest string `json:"digest,omitempty"`
	// Reason says why; a rejected run's release fails with it.
	Reason string `json:"reason,omitempty"`
	// By is the name the client says answers (user@host). The run records
	// the subject of SubjectHeader instead; this name is recorded, marked
	// unverified, only when the request carried none. In an ApprovalState's
	// Answer, By is the recorded subject as shown (engine.Actor.String).
	By string `json:"by,omitempty"`
}

// ApprovalAnswer is what an accepted ApproveUpdate answers: the run's revision
// and the digest of the plan that was approved or rejected.
type ApprovalAnswer struct {
	Revision int    `json:"revision,omitempty"`
	Digest   string `json:"digest"`
	// Approvals counts the approvals accepted so far, of Required (the
	// workspace's policy; 0: one is enough): an approval the run took may
	// leave it waiting for others.
	Approvals int `json:"approvals,omitempty"`
	Required  int `json:"required,omitempty"`
}

// ApprovalState is a run's approval, in its Progress from the moment it waits.
type ApprovalState struct {
	// Digest is the plan's digest (engine.PlanDigest) the approval is bound to.
	Digest string `json:"digest"`
	// Deadline is when the run stops waiting and fails, in workflow time.
	Deadline time.Time `json:"deadline"`
	// Answer is set once the run was approved or rejected.
	Answer *ApprovalRequest `json:"answer,omitempty"`
	// Required is how many distinct approvals the plan needs (the
	// workspace's approval policy; 0: one, from anyone).
	Required int `json:"required,omitempty"`
	// Approvals are the approvals accepted so far (see Progress.People).
	Approvals int `json:"approvals,omitempty"`
}
