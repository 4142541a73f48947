package release

import (
	"context"
	"encoding/json"
)

// PlanPage returns the nodes of in's plan from offset on, as many as fit in
// about maxBytes of JSON (at least one), and how many nodes the plan has. A
// plan of tens of thousands of resources is larger than one workflow payload
// may be, so a run takes it page by page. The plan is made once (PlanGraph)
// and kept while its pages are asked for; a worker that does not have it makes
// it again, the same, since spec and prior release never change.
func (m *Manager) PlanPage(ctx context.Context, in PlanInput, offset, maxBytes int) (nodes []PlanNode, total int, _ error) {
	plan, ok := m.plans.get(in)
	if !ok {
		var err error
		if plan, err = m.PlanGraph(ctx, in); err != nil {
			return nil, 0, err
		}
		m.plans.put(in, plan)
	}
	total = len(plan.Nodes)
	if offset < 0 || offset > total || offset == total && total > 0 {
		return nil, total, kindf(ErrInvalid, "plan page at node %d: the plan has %d nodes", offset, total)
	}
	end, size := offset, 0
	for end < total {
		size += nodeSize(plan.Nodes[end])
		if size > maxBytes && end > offset {
			break
		}
		end++
	}
	return plan.Nodes[offset:end], total, nil
}

// nodeSize is how many bytes n takes as JSON, or a little more: the activity
// result spells the same fields with the same lengths but omits empty ones.
func nodeSize(n PlanNode) int {
	data, _ := json.Marshal(n)
	return len(data) + 1
}
