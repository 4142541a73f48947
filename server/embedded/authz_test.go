package embedded

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/runspec"
)

// TestViewerThroughTheSDK: a raw SDK client with an operator-issued
// certificate of a subject granted viewer on shop/* lists and describes
// shop's runs, sees no other project's, and is refused a start with a
// message naming it, the action and where; it cannot poll kumo's queue.
func TestViewerThroughTheSDK(t *testing.T) {
	s, alice := startAsOperator(t, "grants:\n  - role: viewer\n    subjects: [alice]\n    scopes: [\"shop/*\"]\n", "alice", Options{})
	ctx := ctxTimeout(t, time.Minute)

	owner, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace(), Logger: quietSDKLogger(), ConnectionOptions: ownerConnection(t, s)})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	// Runs nobody works on: they stay running, filed under their project.
	for _, pw := range [][2]string{{"shop", "dev"}, {"blog", "dev"}} {
		_, err := owner.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: runspec.MutatingWorkflowID(pw[0], pw[1]), TaskQueue: runspec.TaskQueue,
			TypedSearchAttributes: temporal.NewSearchAttributes(
				temporal.NewSearchAttributeKeyKeyword(runspec.AttrProject).ValueSet(pw[0]),
				temporal.NewSearchAttributeKeyKeyword(runspec.AttrWorkspace).ValueSet(pw[1])),
		}, runspec.ApplyWorkflow)
		if err != nil {
			t.Fatalf("owner starts Apply %s/%s: %v", pw[0], pw[1], err)
		}
	}

	var ids []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		// What the owner sees, to know visibility caught up.
		all, err := owner.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all.Executions) < 2 {
			continue
		}
		resp, err := alice.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "ExecutionStatus = 'Running'"})
		if err != nil {
			t.Fatalf("alice lists: %v", err)
		}
		ids = nil
		for _, e := range resp.Executions {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		break
	}
	if !slices.Equal(ids, []string{"kumo/shop/dev"}) {
		t.Errorf("alice's list: %v, want kumo/shop/dev only", ids)
	}
	if _, err := alice.DescribeWorkflowExecution(ctx, "kumo/shop/dev", ""); err != nil {
		t.Errorf("alice describes shop/dev: %v", err)
	}
	if _, err := alice.DescribeWorkflowExecution(ctx, "kumo/blog/dev", ""); !denied(err) {
		t.Errorf("alice describes blog/dev: %v", err)
	}
	if _, err := alice.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "KumoProject = 'x') OR (KumoProject = 'blog'"}); !denied(err) {
		t.Errorf("alice's injected query: %v", err)
	}
	_, err = alice.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kumo/shop/dev", TaskQueue: runspec.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL}, runspec.ApplyWorkflow)
	want := "alice may not apply shop/dev: that needs role deployer on shop/dev (alice has viewer on shop/*)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("alice starts Apply: %v, want %q", err, want)
	}
	if err := alice.TerminateWorkflow(ctx, "kumo/shop/dev", "", "x"); !denied(err) {
		t.Errorf("alice terminates: %v", err)
	}
	poll, err := alice.WorkflowService().PollActivityTaskQueue(context.Background(), &workflowservice.PollActivityTaskQueueRequest{Namespace: s.Namespace()})
	if !denied(err) {
		t.Errorf("alice polls: %v %v", poll, err)
	}
	// The owner still does everything.
	if err := owner.TerminateWorkflow(ctx, "kumo/blog/dev", "", "done"); err != nil {
		t.Errorf("owner terminates: %v", err)
	}
}

// denied: the SDK turns the frontend's PermissionDenied into this error.
func denied(err error) bool {
	var pd *serviceerror.PermissionDenied
	return errors.As(err, &pd)
}
