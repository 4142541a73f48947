package workflows

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/client/embedded"
	"github.com/kumoproj/kumo/engine"
)

var recordApproval = flag.Bool("record-approval", false, "record the missing testdata/approval-*.json from runs that wait for approval, on an embedded Temporal server")

// TestRecordApprovalHistories records, with -record-approval, the histories of
// runs that wait for approval and are answered, for TestReplayRecordedHistories.
// Files already in testdata are kept: approval-signal-* were recorded by the
// version that took the answer as a signal, and runs of it still in flight must
// replay.
func TestRecordApprovalHistories(t *testing.T) {
	if !*recordApproval {
		t.Skip("records histories only with -record-approval")
	}
	ctx := context.Background()
	srv, err := embedded.Start(ctx, embedded.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	tc, err := client.Dial(client.Options{HostPort: srv.Address(), Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &fakeRuntime{objects: map[string]map[string]any{}, reject: map[string]bool{}}
	w := worker.New(tc, TaskQueue, worker.Options{})
	Register(w)
	activities.Register(w, activities.New(b, rt, notRunning{}))
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	for _, run := range recordedApprovals(rt) {
		path := filepath.Join("testdata", run.name+".json")
		if _, err := os.Stat(path); err == nil {
			continue
		}
		in := RunInput{Project: "p", Workspace: "w", Parallelism: 2, ApprovalTimeout: run.timeout}
		if in.SpecHash, err = b.PutSpec(ctx, run.spec); err != nil {
			t.Fatal(err)
		}
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kumo/p/w/" + run.name, TaskQueue: TaskQueue}, ApplyWorkflow, in)
		if err != nil {
			t.Fatal(err)
		}
		if run.answer != nil {
			awaitApprovalStage(t, tc, wr)
			run.answer(t, tc, wr)
		}
		if err := wr.Get(ctx, nil); (err == nil) != run.succeeds {
			t.Fatalf("run %s: error %v", run.name, err)
		}
		var events []*historypb.HistoryEvent
		it := tc.GetWorkflowHistory(ctx, wr.GetID(), wr.GetRunID(), false, 0)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, e)
		}
		data, err := protojson.MarshalOptions{Indent: " "}.Marshal(&historypb.History{Events: events})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type recordedApproval struct {
	name    string
	spec    *engine.Spec
	timeout time.Duration
	// answer, once the run awaits approval; nil lets it time out.
	answer   func(t *testing.T, tc client.Client, wr client.WorkflowRun)
	succeeds bool
}

// recordedApprovals are the runs of the current version to record: approved
// (for its digest), rejected, stale (what is live changed before the
// approval), timed out.
func recordedApprovals(rt *fakeRuntime) []recordedApproval {
	update := func(req ApprovalRequest, before func()) func(*testing.T, client.Client, client.WorkflowRun) {
		return func(t *testing.T, tc client.Client, wr client.WorkflowRun) {
			if before != nil {
				before()
			}
			if _, err := sendApproval(tc, wr, req); err != nil {
				t.Fatal(err)
			}
		}
	}
	liveChange := func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		rt.objects["v1:ConfigMap:ns:s"] = cm("s").Attributes
	}
	return []recordedApproval{
		{name: "approval-update-approved", spec: &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a")}},
			answer: update(ApprovalRequest{Approve: true, By: "recorder"}, nil), succeeds: true},
		{name: "approval-update-rejected", spec: &engine.Spec{Resources: []engine.Resource{cm("a"), cm("c")}},
			answer: update(ApprovalRequest{Reason: "recorded", By: "recorder"}, nil)},
		{name: "approval-update-stale", spec: &engine.Spec{Resources: []engine.Resource{cm("a"), cm("s")}},
			answer: update(ApprovalRequest{Approve: true}, liveChange)},
		{name: "approval-update-timeout", spec: &engine.Spec{Resources: []engine.Resource{cm("t")}}, timeout: time.Second},
	}
}

// sendApproval answers a run with ApproveUpdate, as `kumo approve` does.
func sendApproval(tc client.Client, wr client.WorkflowRun, req ApprovalRequest) (ApprovalAnswer, error) {
	ctx := context.Background()
	h, err := tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: wr.GetID(), RunID: wr.GetRunID(), UpdateName: ApproveUpdate, Args: []any{req},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var answer ApprovalAnswer
	if err == nil {
		err = h.Get(ctx, &answer)
	}
	return answer, err
}

// awaitApprovalStage waits until the run says it awaits approval.
func awaitApprovalStage(t *testing.T, tc client.Client, wr client.WorkflowRun) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var p Progress
		v, err := tc.QueryWorkflow(context.Background(), wr.GetID(), wr.GetRunID(), ProgressQuery)
		if err == nil && v.Get(&p) == nil && p.Stage == StageApproval {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not come to await approval (%v)", wr.GetID(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
