package release

import (
	"context"
	"slices"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/dag"
)

// PlanInput asks for the graph a run walks.
type PlanInput struct {
	Project       string
	Workspace     string
	SpecHash      string
	PriorRevision int
	// Targets are the run's --target addresses, one per line (JoinTargets):
	// a string, so the input stays a key of the plans' cache. Empty: every
	// resource.
	Targets string
	// TargetDependents also keeps what depends on the targets.
	TargetDependents bool
	// AllowProtectedDelete: an admin allowed the run to delete resources
	// whose delete policy is protect (the run checked who asked).
	AllowProtectedDelete bool
}

// Plan is the DAG of a run, by index so it stays small in workflow history:
// Nodes[i].Deps are indexes of nodes that must finish before node i starts.
type Plan struct {
	Nodes []PlanNode
}

// PlanNode is one resource to apply, or (Delete) to remove because it is recorded
// in the prior state but no longer desired.
type PlanNode struct {
	ID string
	// Type is the resource's type: how long its steps may take depends on it.
	Type engine.Type
	Deps []int32
	// Refs are the nodes whose live attributes this one references ($kumo_path);
	// they are among Deps. When one of them changes, so may this node's values.
	Refs []int32
	// Applied are those of Deps that need only be applied before this node
	// starts, not healthy (engine.ExtAfterApplied: the kind tiers inside a
	// sync wave); the node still finishes only once healthy.
	Applied []int32
	Delete  bool
}

// PlanGraph validates the spec and returns the nodes to walk: every spec resource
// in dependency order, plus a delete node for every prior resource the spec
// dropped. Deletes follow the prior dependencies reversed, so a Namespace is
// removed after what was in it. With targets, only the nodes they address and
// what those need are kept (narrow). A delete node whose resource is
// protected fails the plan, so nothing is deleted (checkDeletes).
func (m *Manager) PlanGraph(ctx context.Context, in PlanInput) (Plan, error) {
	targets, err := ParseTargets(in.Targets)
	if err != nil {
		return Plan{}, kindErr(ErrInvalid, err)
	}
	spec, err := m.spec(ctx, in.SpecHash)
	if err != nil {
		return Plan{}, err
	}
	if err := spec.Validate(); err != nil {
		return Plan{}, kindErr(ErrInvalid, err)
	}
	g, err := spec.Graph()
	if err != nil {
		return Plan{}, kindErr(ErrInvalid, err)
	}
	prior, err := m.priorRelease(ctx, in.Project, in.Workspace, in.PriorRevision)
	if err != nil {
		return Plan{}, err
	}
	var gone []engine.Resource
	if prior != nil && prior.State != nil {
		desired := map[string]bool{}
		for _, r := range spec.Resources {
			desired[r.ID] = true
		}
		for _, r := range prior.State.Resources {
			if !desired[r.ID] {
				gone = append(gone, r)
			}
		}
	}
	plan, err := buildPlan(g, gone)
	if err != nil {
		return Plan{}, err
	}
	goneTypes := map[string]engine.Type{}
	for _, r := range gone {
		goneTypes[r.ID] = r.Type
	}
	for i := range plan.Nodes {
		if n := &plan.Nodes[i]; n.Delete {
			n.Type = goneTypes[n.ID]
		} else {
			n.Type = spec.resource(n.ID).Type
		}
	}
	addApplied(&plan, spec.Spec)
	if err := addRefs(&plan, spec); err != nil {
		return Plan{}, err
	}
	if plan, err = narrow(plan, targets, in.TargetDependents); err != nil {
		return Plan{}, err
	}
	recorded := make(map[string]engine.Resource, len(gone))
	for _, r := range gone {
		recorded[r.ID] = r
	}
	what := "this run (removing resources the spec no longer has)"
	if len(spec.Resources) == 0 {
		what = "destroy"
	}
	if err := checkDeletes(plan, recorded, spec, what, in.AllowProtectedDelete); err != nil {
		return Plan{}, err
	}
	return plan, nil
}

// addApplied records, for each node, the dependencies it needs only applied.
func addApplied(plan *Plan, spec *engine.Spec) {
	only := spec.AppliedOnly()
	if len(only) == 0 {
		return
	}
	for i := range plan.Nodes {
		n := &plan.Nodes[i]
		if n.Delete || len(only[n.ID]) == 0 {
			continue
		}
		for _, d := range n.Deps {
			if only[n.ID][plan.Nodes[d].ID] {
				n.Applied = append(n.Applied, d)
			}
		}
	}
}

// addRefs records, for each node, the nodes its references point at.
func addRefs(plan *Plan, spec *specIndex) error {
	index := map[string]int32{}
	for i, n := range plan.Nodes {
		if !n.Delete {
			index[n.ID] = int32(i)
		}
	}
	for i := range spec.Resources {
		res := &spec.Resources[i]
		refs, err := spec.refsOf(res.ID)
		if err != nil {
			return err
		}
		n := &plan.Nodes[index[res.ID]]
		for _, ref := range refs {
			if j := index[ref.ResourceID]; !slices.Contains(n.Refs, j) {
				n.Refs = append(n.Refs, j)
			}
		}
	}
	return nil
}

func buildPlan(apply *dag.Graph[string], gone []engine.Resource) (Plan, error) {
	order, err := apply.TopoSort()
	if err != nil {
		return Plan{}, kindErr(ErrInvalid, err)
	}
	var plan Plan
	index := map[string]int32{}
	for _, id := range order {
		index[id] = int32(len(plan.Nodes))
		plan.Nodes = append(plan.Nodes, PlanNode{ID: id})
	}
	for _, id := range order {
		n := &plan.Nodes[index[id]]
		for _, dep := range apply.DependenciesOf(id) {
			n.Deps = append(n.Deps, index[dep])
		}
	}
	removal, rorder, err := removalGraph(gone)
	if err != nil {
		return Plan{}, kindf(ErrInvalid, "prior state: %v", err)
	}
	if removal == nil {
		return plan, nil
	}
	for _, id := range rorder {
		index[id] = int32(len(plan.Nodes))
		plan.Nodes = append(plan.Nodes, PlanNode{ID: id, Delete: true})
	}
	for _, id := range rorder {
		n := &plan.Nodes[index[id]]
		for _, dep := range removal.DependenciesOf(id) {
			n.Deps = append(n.Deps, index[dep])
		}
	}
	return plan, nil
}
