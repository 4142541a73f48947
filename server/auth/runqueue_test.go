package auth

import (
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc/codes"

	"github.com/kumoproj/kumo/runspec"
)

// TestRunQueue: queuing a run (SignalWithStart of the stack's Queue with
// EnqueueSignal) takes the deployer's right on the stack, and its signal is
// stamped with the subject, who the queued run is started as; a viewer may
// not queue, nor take an entry out (DequeueSignal takes cancel); the queue's
// ID is of its stack only.
func TestRunQueue(t *testing.T) {
	f := newFixture(t)
	alice, bob := f.as(t, "alice"), f.as(t, "bob")
	enqueue := func(id string) *workflowservice.SignalWithStartWorkflowExecutionRequest {
		return &workflowservice.SignalWithStartWorkflowExecutionRequest{
			WorkflowId: id, WorkflowType: &commonpb.WorkflowType{Name: runspec.QueueWorkflow},
			TaskQueue: &taskqueuepb.TaskQueue{Name: runspec.TaskQueue}, SignalName: runspec.EnqueueSignal,
			Header: &commonpb.Header{Fields: map[string]*commonpb.Payload{runspec.SubjectHeader: {
				Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`{"name":"admin","roles":["admin"],"verified":true}`)}}},
		}
	}
	m := wfs + "SignalWithStartWorkflowExecution"
	req := enqueue(runspec.QueueWorkflowID("shop", "dev"))
	if err := f.i.authorize(bob, m, req); err != nil {
		t.Fatalf("bob queues on shop/dev: %v", err)
	}
	if s := stamped(t, req.Header); s.Name != "bob" || !s.Verified || s.HasRole("admin") {
		t.Errorf("the enqueue is stamped %+v, want bob's own subject, replacing the forged one", s)
	}
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"viewer queues":      {f.i.authorize(alice, m, enqueue(runspec.QueueWorkflowID("shop", "dev"))), "alice may not apply shop/dev"},
		"deployer elsewhere": {f.i.authorize(bob, m, enqueue(runspec.QueueWorkflowID("shop", "prod"))), "bob may not apply shop/prod"},
		"queue on the lock":  {f.i.authorize(bob, m, enqueue("kumo/shop/dev")), `workflow ID "kumo/shop/dev" is not the ID of a Queue run`},
		"viewer dequeues": {f.i.authorize(alice, wfs+"SignalWorkflowExecution", &workflowservice.SignalWorkflowExecutionRequest{
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: runspec.QueueWorkflowID("shop", "dev")}, SignalName: runspec.DequeueSignal}), "alice may not cancel shop/dev"},
	} {
		if code(c.err) != codes.PermissionDenied || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want PermissionDenied with %q", name, c.err, c.want)
		}
	}
	deq := &workflowservice.SignalWorkflowExecutionRequest{
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: runspec.QueueWorkflowID("shop", "dev")}, SignalName: runspec.DequeueSignal}
	if err := f.i.authorize(bob, wfs+"SignalWorkflowExecution", deq); err != nil {
		t.Errorf("bob takes an entry out of shop/dev's queue: %v", err)
	}
	if s := stamped(t, deq.Header); s.Name != "bob" {
		t.Errorf("the dequeue is stamped %+v, want bob", s)
	}
}
