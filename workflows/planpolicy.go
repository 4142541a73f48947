package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/planpolicy"
)

// checkPolicies checks a previewed plan against the operator's and the
// workspace's plan policies (CheckPolicies), before any approval: the
// violations join the run's progress and its plan's digest, a deny fails the
// run, and a require-approval raises the approvals the plan needs (raiseApproval).
// A plan without changes has nothing to check.
func (r *run) checkPolicies(ctx workflow.Context, key backend.ReleaseKey, specHash string, prior int, changes []engine.Change) error {
	in := activities.PolicyInput{Key: key, SpecHash: specHash, PriorRevision: prior, Settings: r.in.Settings}
	for i, c := range changes {
		if c.Action == engine.UnChanged {
			continue
		}
		pc := activities.PolicyChange{ID: c.ID, Type: c.Type, Action: c.Action, Delete: r.plan.Nodes[i].Delete}
		for _, f := range c.Fields {
			pc.Paths = append(pc.Paths, f.Path)
		}
		in.Changes = append(in.Changes, pc)
	}
	if len(in.Changes) == 0 {
		return nil
	}
	switch v := changeVersion(ctx, planPoliciesChange, planPoliciesVersion); {
	case v == workflow.DefaultVersion, v >= planPoliciesWhenAny && r.noPolicies:
		return nil
	}
	o := shortOptions("check policies")
	o.StartToCloseTimeout, o.HeartbeatTimeout = planTimeout, shortCallTimeout
	var res planpolicy.Results
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, o), acts.CheckPolicies, in).Get(ctx, &res); err != nil {
		return err
	}
	r.progress.Policies = res.Violations
	r.progress.Digest = engine.TargetedDigest(engine.PolicyDigest(changes, res), r.in.Targeting())
	if err := res.Denied(); err != nil {
		r.showDetails()
		return err
	}
	r.raiseApproval(res)
	r.showDetails()
	return nil
}

// raiseApproval makes the run's approval rules ask for what require-approval
// violations ask: at least their approvers, in their groups when they name
// some (instead of the workspace's groups).
func (r *run) raiseApproval(res planpolicy.Results) {
	n, groups := res.Approval()
	if n == 0 {
		return
	}
	p := r.rules.Policy
	p.Required = max(p.Required, n)
	if len(groups) > 0 {
		p.Groups = groups
	}
	r.rules.Policy = p
	r.policyApproval = true
}

// maxDetailedViolations bounds the violations a run's details list.
const maxDetailedViolations = 10

// policyLines lists a plan's policy violations for the run's details (the Web
// UI): each with its effect, resource, rule and message.
func policyLines(vs []planpolicy.Violation) string {
	if len(vs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\nPolicies (%d violations):", len(vs))
	for i, v := range vs {
		if i == maxDetailedViolations {
			fmt.Fprintf(&b, "\n- and %d more (kumo run show)", len(vs)-i)
			break
		}
		fmt.Fprintf(&b, "\n- %s: %s", v.Effect, v)
	}
	return b.String()
}
