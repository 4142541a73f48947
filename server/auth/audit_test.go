package auth

import (
	"context"
	"fmt"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	failurepb "go.temporal.io/api/failure/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"

	"github.com/kumoproj/kumo/runspec"
)

// TestRefusedUpdateIsAudited: an approval the frontend lets through but the
// run's validator refuses (four eyes) is in the audit log as denied, with
// the run's reason; an accepted one as allowed.
func TestRefusedUpdateIsAudited(t *testing.T) {
	f := newFixture(t)
	approve := func() *workflowservice.UpdateWorkflowExecutionRequest {
		return &workflowservice.UpdateWorkflowExecutionRequest{WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "kumo/shop/dev"}, Request: &updatepb.Request{Input: &updatepb.Input{Name: runspec.ApproveUpdate}}}
	}
	info := &grpc.UnaryServerInfo{FullMethod: wfs + "UpdateWorkflowExecution"}
	refused := func(context.Context, any) (any, error) {
		return &workflowservice.UpdateWorkflowExecutionResponse{Outcome: &updatepb.Outcome{Value: &updatepb.Outcome_Failure{Failure: &failurepb.Failure{Message: "four-eyes approval — the run was started by you"}}}}, nil
	}
	if _, err := f.i.Unary(f.owner(t), approve(), info, refused); err != nil {
		t.Fatal(err)
	}
	accepted := func(context.Context, any) (any, error) {
		return &workflowservice.UpdateWorkflowExecutionResponse{Outcome: &updatepb.Outcome{Value: &updatepb.Outcome_Success{}}}, nil
	}
	if _, err := f.i.Unary(f.owner(t), approve(), info, accepted); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range f.audit.entries {
		got = append(got, fmt.Sprintf("%s %s %v %s", e.Action, e.Target, e.Allowed, e.Reason))
	}
	want := []string{
		"approve kumo/shop/dev true " + wfs + "UpdateWorkflowExecution",
		"approve kumo/shop/dev false refused by the run: four-eyes approval — the run was started by you",
		"approve kumo/shop/dev true " + wfs + "UpdateWorkflowExecution",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
