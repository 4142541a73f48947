package planpolicy

import (
	"fmt"
	"slices"
)

// Effect is what a rule that does not hold does to the run.
type Effect string

const (
	// Deny fails the run before anything is applied.
	Deny Effect = "deny"
	// Warn lets the run go on, and shows the violation in its preview,
	// `run show`, its details and its result.
	Warn Effect = "warn"
	// RequireApproval raises the run's approval requirement to the rule's
	// Approvers (from Group, when set): a run that would have been
	// auto-approved waits.
	RequireApproval Effect = "require-approval"
)

// Actions a selector names, as a plan's changes are classed for rules. An
// adoption (kumo takes over a live object) is an update.
const (
	ActionCreate = "create"
	ActionUpdate = "update"
	ActionDelete = "delete"
)

// Rule is one policy rule, as written in a workspace file's `policies` list or
// the operator's policies file.
//
//   - name: limits-required
//     match: {kinds: [Deployment], namespaces: [prod], actions: [create, update]}
//     expression: desired.spec.template.spec.containers.all(c, has(c.resources.limits))
//     message: every container needs resource limits
//     effect: deny
type Rule struct {
	// Name identifies the rule in results; unique within its source.
	Name string `json:"name"`
	// Match selects the resources the rule applies to; empty selects all.
	Match Selector `json:"match,omitzero"`
	// Expression is CEL that must evaluate to true for every selected
	// resource (see Resource for its variables).
	Expression string `json:"expression"`
	// Message says what is wrong when the expression does not hold.
	Message string `json:"message"`
	// Effect is deny, warn or require-approval.
	Effect Effect `json:"effect"`
	// Approvers (require-approval) is how many distinct approvals the run
	// then needs; 1 when not set.
	Approvers int `json:"approvers,omitempty"`
	// Group (require-approval), when set, is the group those approvers must
	// be in.
	Group string `json:"group,omitempty"`
}

// Selector selects resources; each field that is set must match.
type Selector struct {
	// Kinds are Kubernetes kinds (Deployment) or Terraform resource types
	// (random_password).
	Kinds []string `json:"kinds,omitempty"`
	// Namespaces are Kubernetes namespaces ("" for cluster-scoped objects).
	Namespaces []string `json:"namespaces,omitempty"`
	// Labels must all be on the resource, with these values (the desired
	// object's labels; the live object's for a delete).
	Labels map[string]string `json:"labels,omitempty"`
	// Actions are create, update and delete; empty: all three.
	Actions []string `json:"actions,omitempty"`
}

// matches reports whether s selects r.
func (s Selector) matches(r *Resource) bool {
	if len(s.Kinds) > 0 && !slices.Contains(s.Kinds, r.Kind) {
		return false
	}
	if len(s.Namespaces) > 0 && !slices.Contains(s.Namespaces, r.Namespace) {
		return false
	}
	if len(s.Actions) > 0 && !slices.Contains(s.Actions, r.Action) {
		return false
	}
	for k, v := range s.Labels {
		if got, ok := r.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// check validates everything of a rule but its expression; errors name the
// field.
func (r Rule) check() error {
	switch r.Effect {
	case Deny, Warn:
		if r.Approvers != 0 || r.Group != "" {
			return fmt.Errorf("approvers and group are for effect %s only", RequireApproval)
		}
	case RequireApproval:
		if r.Approvers < 0 {
			return fmt.Errorf("approvers: %d: want 1 or more", r.Approvers)
		}
	case "":
		return fmt.Errorf("effect: missing: want %s, %s or %s", Deny, Warn, RequireApproval)
	default:
		return fmt.Errorf("effect: %q: want %s, %s or %s", r.Effect, Deny, Warn, RequireApproval)
	}
	if r.Expression == "" {
		return fmt.Errorf("expression: missing: a CEL expression that must hold")
	}
	if r.Message == "" {
		return fmt.Errorf("message: missing: what is wrong when the expression does not hold")
	}
	for i, a := range r.Match.Actions {
		if a != ActionCreate && a != ActionUpdate && a != ActionDelete {
			return fmt.Errorf("match.actions[%d]: %q: want %s, %s or %s", i, a, ActionCreate, ActionUpdate, ActionDelete)
		}
	}
	return nil
}

// approvers is how many approvals a require-approval violation asks for.
func (r Rule) approvers() int { return max(1, r.Approvers) }
