package client

import (
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/runspec"
)

// TestLiveHealthReadsEveryWaitsHeartbeat: the health a wait heartbeats shows
// on its node, whether it waits alone (WaitResource) or with others
// (WaitResources); a node the progress lacks is added.
func TestLiveHealthReadsEveryWaitsHeartbeat(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	pending := func(activity string, details any) *workflowpb.PendingActivityInfo {
		p, err := dc.ToPayloads(details)
		if err != nil {
			t.Fatal(err)
		}
		return &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: activity}, HeartbeatDetails: p}
	}
	progressing := func(msg string) health.Result { return health.Result{Status: health.Progressing, Message: msg} }
	desc := &workflowservice.DescribeWorkflowExecutionResponse{PendingActivities: []*workflowpb.PendingActivityInfo{
		pending(runspec.WaitResourceActivity, runspec.WaitProgress{ID: "a", Health: progressing("0/1")}),
		pending(runspec.WaitResourcesActivity, runspec.WaitBatchProgress{Nodes: []runspec.WaitProgress{
			{ID: "b", Health: progressing("1/3")}, {ID: "c", Health: progressing("2/3")}, {ID: "d"},
		}}),
		pending("ApplyResources", map[string]any{"outcomes": []any{}}),
	}}
	p := &runspec.Progress{Stage: runspec.StageApplying, Nodes: []runspec.Node{
		{ID: "a", Status: runspec.NodeRunning}, {ID: "b", Status: runspec.NodeRunning}, {ID: "d", Status: runspec.NodeRunning},
	}}
	addLiveHealth(desc, p, dc)
	want := map[string]string{"a": progressing("0/1").String(), "b": progressing("1/3").String(), "c": progressing("2/3").String(), "d": ""}
	if len(p.Nodes) != len(want) {
		t.Fatalf("nodes %+v, want %v", p.Nodes, want)
	}
	for _, n := range p.Nodes {
		if h, ok := want[n.ID]; !ok || n.Health != h {
			t.Errorf("%s's health %q, want %q", n.ID, n.Health, h)
		}
	}
}
