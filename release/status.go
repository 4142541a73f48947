package release

import (
	"context"
	"errors"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// StackStatus is the live health of every resource of a stack's latest release.
type StackStatus struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Revision  int    `json:"revision"`
	// Health is the worst of every node shown (owned objects included).
	Health    health.Result        `json:"health"`
	Resources []runtime.StatusNode `json:"resources"`
}

// Status reads every resource the latest release of project/workspace
// recorded, live, with its health; with depth > 0 also the objects each owns,
// down to depth levels. Runtimes that read many at once (runtime.StatusReader)
// are asked once for all their resources; others are read one by one, a
// resource that exists counting as Healthy.
func (m *Manager) Status(ctx context.Context, project, workspace string, settings runspec.RuntimeSettings, depth int) (StackStatus, error) {
	rel, err := m.backend.LatestRelease(ctx, project, workspace)
	if err != nil {
		return StackStatus{}, err
	}
	st := StackStatus{Project: project, Workspace: workspace, Revision: rel.Revision}
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
		rt, err := m.runtime(typ, settings)
		if err != nil {
			return StackStatus{}, err
		}
		if sr, ok := rt.(runtime.StatusReader); ok {
			res := make([]*engine.Resource, len(idx))
			for k, i := range idx {
				res[k] = &rel.State.Resources[i]
			}
			nodes, err := sr.Status(ctx, res, depth)
			if err != nil {
				return StackStatus{}, err
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
				return StackStatus{}, err
			}
			st.Resources[i] = runtime.StatusNode{ID: r.ID, Health: h}
		}
	}
	st.Health = health.Worst(flatten(st.Resources)...)
	return st, nil
}

func flatten(nodes []runtime.StatusNode) []health.Result {
	var out []health.Result
	for _, n := range nodes {
		out = append(out, n.Health)
		out = append(out, flatten(n.Children)...)
	}
	return out
}
