package release

import (
	"context"
	"errors"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// Status reads every resource the latest release of project/workspace
// recorded, live, with its health; with depth > 0 also the objects each owns,
// down to depth levels. Runtimes that read many at once (runtime.StatusReader)
// are asked once for all their resources; others are read one by one, a
// resource that exists counting as Healthy.
func (m *Manager) Status(ctx context.Context, project, workspace string, settings runspec.RuntimeSettings, depth int) (runspec.StackStatus, error) {
	rel, err := m.backend.LatestRelease(ctx, project, workspace)
	if err != nil {
		return runspec.StackStatus{}, err
	}
	st := runspec.StackStatus{Project: project, Workspace: workspace, Revision: rel.Revision}
	if rel.State == nil {
		st.Health = health.Worst()
		return st, nil
	}
	byType := map[engine.Type][]int{}
	for i, r := range rel.State.Resources {
		byType[r.Type] = append(byType[r.Type], i)
	}
	st.Resources = make([]runtime.StatusNode, len(rel.State.Resources))
	for typ, idx := range byType {
		rt, err := m.runtime(ctx, workspace, typ, settings)
		if err != nil {
			return runspec.StackStatus{}, err
		}
		if sr, ok := rt.(runtime.StatusReader); ok {
			res := make([]*engine.Resource, len(idx))
			for k, i := range idx {
				res[k] = &rel.State.Resources[i]
			}
			nodes, err := sr.Status(ctx, res, depth)
			if err != nil {
				return runspec.StackStatus{}, err
			}
			for k, i := range idx {
				st.Resources[i] = nodes[k]
			}
			continue
		}
		for _, i := range idx {
			r := &rel.State.Resources[i]
			h := health.Result{Status: health.Healthy}
			if _, err := rt.Read(ctx, r); errors.Is(err, runtime.ErrNotFound) {
				h = health.Result{Status: health.Missing, Message: "not found"}
			} else if err != nil {
				return runspec.StackStatus{}, err
			}
			st.Resources[i] = runtime.StatusNode{ID: r.ID, Health: h}
		}
	}
	st.Health = stackHealth(st.Resources)
	return st, nil
}

// stackHealth is the health of a stack whose resources (and the objects they
// own) are nodes: Healthy alone when all are, else the worst node's status
// and reason, its message naming that node. One resource's message is never
// passed off as the stack's.
func stackHealth(nodes []runtime.StatusNode) health.Result {
	worst, ok := worstNode(nodes)
	if !ok || worst.Health.Status == health.Healthy {
		return health.Result{Status: health.Healthy}
	}
	h := worst.Health
	if h.Message == "" {
		h.Message = worst.ID
	} else {
		h.Message = worst.ID + ": " + h.Message
	}
	return h
}

// worstNode is the least healthy of nodes and their children, the first one
// among equals (as health.Worst); false when there are none.
func worstNode(nodes []runtime.StatusNode) (runtime.StatusNode, bool) {
	var worst runtime.StatusNode
	found := false
	for _, n := range nodes {
		if !found || n.Health.Status.Worse(worst.Health.Status) {
			worst, found = n, true
		}
		if child, ok := worstNode(n.Children); ok && child.Health.Status.Worse(worst.Health.Status) {
			worst = child
		}
	}
	return worst, found
}
