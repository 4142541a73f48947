package client

import (
	"context"
	"maps"
	"slices"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/kumoproj/kumo/runspec"
)

// addLive adds to p what only Temporal knows of the steps in flight: their
// live health (addLiveHealth) and whether they wait for a worker
// (addWaiting). Best effort: a failed describe leaves p as it was.
func (r *Run) addLive(ctx context.Context, p *runspec.Progress) {
	switch p.Stage {
	case runspec.StagePreview, runspec.StageApplying, runspec.StageDestroying, runspec.StageCompensating:
	default:
		return
	}
	desc, err := r.c.temporal.DescribeWorkflowExecution(ctx, r.WorkflowID, r.RunID)
	if err != nil {
		return
	}
	addLiveHealth(desc, p, r.c.DataConverter())
	r.addWaiting(ctx, desc, p)
}

// addLiveHealth fills in the health of the nodes waiting right now: the
// workflow learns it only when a wait ends, the waiting activity heartbeats it
// (runspec.WaitProgress, or a WaitBatchProgress for a wait of several), and
// Temporal keeps the last heartbeat of each pending activity.
func addLiveHealth(desc *workflowservice.DescribeWorkflowExecutionResponse, p *runspec.Progress, dc converter.DataConverter) {
	if p.Stage != runspec.StageApplying && p.Stage != runspec.StageDestroying {
		return
	}
	live := map[string]string{}
	see := func(wp runspec.WaitProgress) {
		if wp.Health.Status != "" {
			live[wp.ID] = wp.Health.String()
		}
	}
	for _, a := range desc.GetPendingActivities() {
		if a.GetHeartbeatDetails() == nil {
			continue
		}
		switch a.GetActivityType().GetName() {
		case runspec.WaitResourceActivity:
			var wp runspec.WaitProgress
			if dc.FromPayloads(a.GetHeartbeatDetails(), &wp) == nil {
				see(wp)
			}
		case runspec.WaitResourcesActivity:
			var bp runspec.WaitBatchProgress
			if dc.FromPayloads(a.GetHeartbeatDetails(), &bp) == nil {
				for _, wp := range bp.Nodes {
					see(wp)
				}
			}
		}
	}
	for i := range p.Nodes {
		if h, ok := live[p.Nodes[i].ID]; ok && p.Nodes[i].Status == runspec.NodeRunning {
			p.Nodes[i].Health = h
			delete(live, p.Nodes[i].ID)
		}
	}
	// A progress of what changed since the last look lacks the nodes that
	// only wait: their health is news too.
	for _, id := range slices.Sorted(maps.Keys(live)) {
		if !slices.ContainsFunc(p.Nodes, func(n runspec.Node) bool { return n.ID == id }) {
			p.Nodes = append(p.Nodes, runspec.Node{ID: id, Status: runspec.NodeRunning, Health: live[id]})
		}
	}
}
