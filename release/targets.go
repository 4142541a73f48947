package release

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/resid"
)

// ParseTargets reads a run's --target addresses (PlanInput.Targets, one per
// line). Errors name the address.
func ParseTargets(lines string) ([]resid.Target, error) {
	if lines == "" {
		return nil, nil
	}
	var targets []resid.Target
	for _, s := range strings.Split(lines, "\n") {
		t, err := resid.ParseTarget(s)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// narrow keeps the nodes of plan a targeted run walks, as Terraform's
// -target does: the nodes the targets address, then (dependents) every node
// that depends on one of those, then everything those depend on, so each
// node kept finds its dependencies applied. For a delete node the
// dependencies are the recorded resources that depended on it, deleted
// first: deleting a target deletes what depends on it, as a targeted destroy
// does in Terraform. Kept nodes stay in plan order, their Deps, Refs and Applied
// renumbered. A target that addresses no node is an error naming it.
func narrow(plan Plan, targets []resid.Target, dependents bool) (Plan, error) {
	if len(targets) == 0 {
		return plan, nil
	}
	keep := make([]bool, len(plan.Nodes))
	var unmatched []string
	for _, t := range targets {
		hit := false
		for i, n := range plan.Nodes {
			if t.Matches(n.ID, string(n.Type)) {
				keep[i], hit = true, true
			}
		}
		if !hit {
			unmatched = append(unmatched, t.Raw)
		}
	}
	if len(unmatched) > 0 {
		return Plan{}, kindf(ErrInvalid, "--target %s: matches no resource of the spec or the recorded state", strings.Join(unmatched, ", --target "))
	}
	if dependents {
		dependentsOf := make([][]int32, len(plan.Nodes))
		for i, n := range plan.Nodes {
			for _, d := range n.Deps {
				dependentsOf[d] = append(dependentsOf[d], int32(i))
			}
		}
		closure(keep, dependentsOf)
	}
	deps := make([][]int32, len(plan.Nodes))
	for i, n := range plan.Nodes {
		deps[i] = n.Deps
	}
	closure(keep, deps)
	index := make([]int32, len(plan.Nodes))
	var out Plan
	for i, n := range plan.Nodes {
		if !keep[i] {
			index[i] = -1
			continue
		}
		index[i] = int32(len(out.Nodes))
		out.Nodes = append(out.Nodes, n)
	}
	renumber := func(xs []int32) []int32 {
		if xs == nil {
			return nil
		}
		ys := make([]int32, 0, len(xs))
		for _, x := range xs {
			if index[x] < 0 {
				// Cannot happen: closure kept every dependency.
				panic(fmt.Sprintf("narrow: dependency %d of a kept node dropped", x))
			}
			ys = append(ys, index[x])
		}
		return ys
	}
	for i := range out.Nodes {
		out.Nodes[i].Deps = renumber(out.Nodes[i].Deps)
		out.Nodes[i].Refs = renumber(out.Nodes[i].Refs)
		out.Nodes[i].Applied = renumber(out.Nodes[i].Applied)
	}
	return out, nil
}

// closure adds to keep every node reachable from a kept one along edges.
func closure(keep []bool, edges [][]int32) {
	var stack []int32
	for i, k := range keep {
		if k {
			stack = append(stack, int32(i))
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, j := range edges[i] {
			if !keep[j] {
				keep[j] = true
				stack = append(stack, j)
			}
		}
	}
}

// JoinTargets is the one-per-line form of PlanInput.Targets, sorted and
// without duplicates so the same targets make the same plan (and cache key).
func JoinTargets(targets []string) string {
	ts := slices.Clone(targets)
	slices.Sort(ts)
	return strings.Join(slices.Compact(ts), "\n")
}

// checkDeletes reads the delete policy of every delete node: a protected one
// fails the plan, before anything is deleted, unless allow (an admin's
// --allow-protected-delete, which the run checked). The policy is the
// strongest of the recorded resource's and the spec's, so dropping the
// annotation and the resource in one change still finds it.
func checkDeletes(plan Plan, recorded map[string]engine.Resource, spec *specIndex, what string, allow bool) error {
	var protected []string
	for _, n := range plan.Nodes {
		if !n.Delete {
			continue
		}
		r, ok := recorded[n.ID]
		if !ok {
			continue
		}
		p, err := engine.DeletePolicyOfAll(&r, spec.resource(n.ID))
		if err != nil {
			return kindErr(ErrInvalid, err)
		}
		if p == engine.DeleteProtect {
			protected = append(protected, n.ID)
		}
	}
	if len(protected) == 0 || allow {
		return nil
	}
	return kindErr(ErrResourceFailed, &engine.ProtectedError{What: what, IDs: protected})
}
