package engine

import (
	"errors"
	"fmt"
)

// ApprovalPolicy is a workspace's rule for who must approve a run's plan
// before it is applied (the workspace's `approval` section). Workspaces are
// written by their administrators; runs read the policy from the backend,
// never from what a client sends.
//
//	approval:
//	  required: 2          # distinct approvals (0, the default: anyone may answer, as before)
//	  groups: [sre]        # approvers must be in one of these groups
//	  fourEyes: true       # whoever started the run may not approve it
type ApprovalPolicy struct {
	// Required is how many distinct approvers a plan needs. 0 keeps the
	// behaviour of a workspace without a policy: one answer from anyone, and
	// --yes skips the wait.
	Required int `json:"required,omitempty"`
	// Groups, when set, are the groups an approver must be in (one of them).
	Groups []string `json:"groups,omitempty"`
	// FourEyes refuses the run's starter as an approver, and --yes.
	FourEyes bool `json:"fourEyes,omitempty"`
}

// Enforced reports whether the policy restricts approvals at all.
func (p ApprovalPolicy) Enforced() bool { return p.Required > 0 }

// Validate checks the policy; errors name the field.
func (p ApprovalPolicy) Validate() error {
	switch {
	case p.Required < 0:
		return fmt.Errorf("approval.required: %d: want 0 (no approval rules) or more approvers", p.Required)
	case p.Required == 0 && (p.FourEyes || len(p.Groups) > 0):
		return errors.New("approval: groups and fourEyes need approval.required of 1 or more")
	}
	for i, g := range p.Groups {
		if g == "" {
			return fmt.Errorf("approval.groups[%d]: empty group name", i)
		}
	}
	return nil
}
