package client

import (
	"context"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/workflows"
)

// addLiveHealth fills in the health of the nodes waiting right now: the
// workflow learns it only when a wait ends, the waiting activity heartbeats it
// (activities.WaitProgress), and Temporal keeps the last heartbeat of each
// pending activity. Best effort: a failed describe leaves p as it was.
func (r *Run) addLiveHealth(ctx context.Context, p *workflows.Progress) {
	if p.Stage != workflows.StageApplying && p.Stage != workflows.StageDestroying {
		return
	}
	desc, err := r.c.temporal.DescribeWorkflowExecution(ctx, r.WorkflowID, r.RunID)
	if err != nil {
		return
	}
	live := map[string]string{}
	for _, a := range desc.GetPendingActivities() {
		if a.GetActivityType().GetName() != activities.WaitResourceActivity || a.GetHeartbeatDetails() == nil {
			continue
		}
		var wp activities.WaitProgress
		if r.c.DataConverter().FromPayloads(a.GetHeartbeatDetails(), &wp) == nil && wp.Health.Status != "" {
			live[wp.ID] = wp.Health.String()
		}
	}
	for i := range p.Nodes {
		if h, ok := live[p.Nodes[i].ID]; ok && p.Nodes[i].Status == workflows.NodeRunning {
			p.Nodes[i].Health = h
		}
	}
}
