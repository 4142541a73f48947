package workflows

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/notify"
	"github.com/kumoproj/kumo/runspec"
)

// TestSlowSinkHoldsNoApproval: a sink that takes its time over
// awaiting-approval holds neither the approval nor the apply: the run takes
// the approval and applies while the POST is in flight, and ends once the
// sink answered. Each event reaches the sink with the ID of its workflow,
// run and kind, and succeeded once.
func TestSlowSinkHoldsNoApproval(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newHarness(t)
	posted, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	ids := map[string][]string{}
	sink := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		ev := r.Header.Get(notify.HeaderEvent)
		mu.Lock()
		ids[ev] = append(ids[ev], r.Header.Get(notify.HeaderEventID))
		mu.Unlock()
		if ev == notify.AwaitingApproval {
			once.Do(func() { close(posted) })
			select { // held, but answered within the POST's timeout
			case <-release:
			case <-time.After(9 * time.Second):
			}
		}
	}))
	defer sink.Close()
	if err := h.backend.PutWorkspace(ctx, &engine.Workspace{Name: "w", Notifications: notify.Config{Sinks: []notify.Sink{
		{Name: "chat", Kind: notify.KindSlack, URL: sink.URL, AllowPrivate: true}}}}); err != nil {
		t.Fatal(err)
	}
	tc := startWorker(t, h.acts)
	hash, err := h.backend.PutSpec(ctx, &engine.Spec{Resources: []engine.Resource{cm("a")}})
	if err != nil {
		t.Fatal(err)
	}
	wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue},
		runspec.ApplyWorkflow, runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-posted:
	case <-ctx.Done():
		t.Fatal("the sink never got awaiting-approval")
	}
	v, err := tc.QueryWorkflow(ctx, wr.GetID(), wr.GetRunID(), runspec.ProgressQuery)
	if err != nil {
		t.Fatal(err)
	}
	var p runspec.Progress
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	u, err := tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: wr.GetID(), RunID: wr.GetRunID(), UpdateName: runspec.ApproveUpdate,
		Args: []any{runspec.ApprovalRequest{Approve: true, Digest: p.Digest}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	var answer runspec.ApprovalAnswer
	if err := u.Get(ctx, &answer); err != nil {
		t.Fatalf("the approval, while the sink holds awaiting-approval: %v", err)
	}
	// The run goes on to apply while the sink still holds the POST.
	applied := func() bool {
		h.rt.mu.Lock()
		defer h.rt.mu.Unlock()
		return len(h.rt.applied) > 0
	}
	for deadline := time.Now().Add(7 * time.Second); !applied(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the approved run applied nothing while the sink held awaiting-approval")
		}
	}
	close(release)
	var res runspec.Result
	if err := wr.Get(ctx, &res); err != nil || res.Status != runspec.StatusSucceeded {
		t.Fatalf("run: %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, ev := range []string{notify.AwaitingApproval, notify.Succeeded} {
		want := notify.EventID(wr.GetID(), wr.GetRunID(), ev)
		if len(ids[ev]) == 0 {
			t.Errorf("no %s", ev)
		}
		for _, id := range ids[ev] {
			if id != want {
				t.Errorf("%s has ID %s, want %s", ev, id, want)
			}
		}
	}
	if n := len(ids[notify.Succeeded]); n != 1 {
		t.Errorf("succeeded %d times, want once", n)
	}
}
