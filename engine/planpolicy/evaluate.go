package planpolicy

import (
	"fmt"
)

// Resource is one change of a plan as rules see it. An expression reads it as
// these variables:
//
//	desired   the object as the spec wants it (null for a delete)
//	live      the object as it is now (null for a create)
//	action    "create", "update" or "delete"
//	paths     the changed field paths of an update (["spec.replicas"])
//	resource  {"id", "kind", "namespace", "name", "labels"}
type Resource struct {
	ID        string
	Kind      string
	Namespace string
	Name      string
	Labels    map[string]string
	Action    string
	Desired   map[string]any
	Live      map[string]any
	Paths     []string
}

func (r *Resource) vars() map[string]any {
	labels := make(map[string]any, len(r.Labels))
	for k, v := range r.Labels {
		labels[k] = v
	}
	paths := r.Paths
	if paths == nil {
		paths = []string{}
	}
	return map[string]any{
		"desired": orNull(r.Desired),
		"live":    orNull(r.Live),
		"action":  r.Action,
		"paths":   paths,
		"resource": map[string]any{
			"id": r.ID, "kind": r.Kind, "namespace": r.Namespace, "name": r.Name, "labels": labels,
		},
	}
}

// orNull passes a nil object to CEL as null, not as an empty map, so
// `desired == null` tells a delete.
func orNull(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// Evaluate runs every rule over every resource it selects and returns the
// violations, in the order of resources, then rules. An expression that
// cannot be evaluated for a resource (a missing field without has(), the
// cost limit) counts as not holding, with the reason: a rule fails closed.
func (s *Set) Evaluate(resources []Resource) Results {
	var res Results
	if s.Len() == 0 {
		return res
	}
	for i := range resources {
		r := &resources[i]
		var vars map[string]any
		for _, rule := range s.rules {
			if !rule.Match.matches(r) {
				continue
			}
			if vars == nil {
				vars = r.vars()
			}
			msg, ok := rule.eval(vars)
			if ok {
				continue
			}
			v := Violation{Resource: r.ID, Rule: rule.Name, Source: rule.source, Message: msg, Effect: rule.Effect}
			if rule.Effect == RequireApproval {
				v.Approvers, v.Group = rule.approvers(), rule.Group
			}
			res.Violations = append(res.Violations, v)
		}
	}
	return res
}

// eval reports whether the rule holds for vars, and the message when not.
func (c *compiled) eval(vars map[string]any) (string, bool) {
	out, _, err := c.prog.Eval(vars)
	if err != nil {
		return fmt.Sprintf("%s (the expression could not be evaluated: %v)", c.Message, err), false
	}
	held, isBool := out.Value().(bool)
	if !isBool {
		return fmt.Sprintf("%s (the expression gave %v, not a bool)", c.Message, out.Value()), false
	}
	return c.Message, held
}
