package planpolicy

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Violation is one rule that did not hold for one resource.
type Violation struct {
	Resource string `json:"resource"`
	Rule     string `json:"rule"`
	// Source is where the rule came from: the operator's file or a
	// workspace ("workspace prod").
	Source  string `json:"source,omitempty"`
	Message string `json:"message"`
	Effect  Effect `json:"effect"`
	// Approvers and Group: what a require-approval violation asks for.
	Approvers int    `json:"approvers,omitempty"`
	Group     string `json:"group,omitempty"`
}

func (v Violation) String() string {
	s := fmt.Sprintf("%s: rule %s: %s", v.Resource, v.Rule, v.Message)
	if v.Effect == RequireApproval {
		s += fmt.Sprintf(" (requires %d approver%s", v.Approvers, plural(v.Approvers))
		if v.Group != "" {
			s += " in group " + v.Group
		}
		s += ")"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Results are a plan's violations.
type Results struct {
	Violations []Violation `json:"violations,omitempty"`
}

// Of returns the violations with effect e.
func (r Results) Of(e Effect) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Effect == e {
			out = append(out, v)
		}
	}
	return out
}

// DeniedError is a plan that deny rules refuse: it names every violation.
type DeniedError struct {
	Violations []Violation
}

// maxListed bounds the violations a DeniedError lists.
const maxListed = 20

func (e *DeniedError) Error() string {
	lines := make([]string, 0, min(len(e.Violations), maxListed)+1)
	for i, v := range e.Violations {
		if i == maxListed {
			lines = append(lines, fmt.Sprintf("and %d more", len(e.Violations)-maxListed))
			break
		}
		lines = append(lines, v.String())
	}
	if len(lines) == 1 {
		return "denied by policy: " + lines[0]
	}
	return fmt.Sprintf("denied by policy (%d violations):\n  %s", len(e.Violations), strings.Join(lines, "\n  "))
}

// Denied is a *DeniedError when any deny rule did not hold, nil otherwise.
func (r Results) Denied() error {
	if d := r.Of(Deny); len(d) > 0 {
		return &DeniedError{Violations: d}
	}
	return nil
}

// Approval is what the require-approval violations ask for: the most
// approvers any asks for (0: none), and the groups those that name one name.
func (r Results) Approval() (approvers int, groups []string) {
	for _, v := range r.Of(RequireApproval) {
		approvers = max(approvers, v.Approvers)
		if v.Group != "" && !slices.Contains(groups, v.Group) {
			groups = append(groups, v.Group)
		}
	}
	slices.Sort(groups)
	return approvers, groups
}

// Canonical is the results in one stable form (sorted by resource, rule and
// message), as JSON: what a plan digest adds for them. Where a rule came from
// is left out: workers may keep the operator's file at different paths, and
// the same violations must give the same digest on each.
func (r Results) Canonical() []byte {
	vs := slices.Clone(r.Violations)
	for i := range vs {
		vs[i].Source = ""
	}
	slices.SortStableFunc(vs, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
	data, err := json.Marshal(vs)
	if err != nil {
		panic(fmt.Sprintf("planpolicy: canonical results: %v", err)) // strings and ints only
	}
	return data
}
