package workflows

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestRunQueueRunsEachAsItsSubject: through the kumo frontend, while
// alice's own apply holds the stack (awaiting approval), dan and then alice
// queue an apply each, and dan a third that alice takes out. The queue's
// head waits for the run it did not start (Blocked), then the queued runs
// start one after the other, in order, each as the subject who queued it
// (the frontend replaced the admin subject their clients forged), as
// revisions 2 and 3; the removed one never runs. A Queue started with
// entries in its input (carrying a forged subject) is refused.
func TestRunQueueRunsEachAsItsSubject(t *testing.T) {
	p := newPeopleTest(t)
	const project, ws = "queued", "default"
	holder := p.start("local:alice", project, ws, false)
	p.awaitApproval(holder)

	queueID := runspec.QueueWorkflowID(project, ws)
	enqueue := func(who, id, cmName string) {
		t.Helper()
		hash, err := p.h.backend.PutSpec(p.ctx, &engine.Spec{Resources: []engine.Resource{cm(cmName)}})
		if err != nil {
			t.Fatal(err)
		}
		e := runspec.QueueEntry{ID: id, WorkflowType: runspec.ApplyWorkflow, Input: runspec.RunInput{
			Project: project, Workspace: ws, SpecHash: hash, AutoApprove: true, StartedBy: "forged-starter@host"}}
		if _, err := p.as[who].SignalWithStartWorkflow(p.ctx, queueID, runspec.EnqueueSignal, e,
			client.StartWorkflowOptions{ID: queueID, TaskQueue: runspec.TaskQueue}, runspec.QueueWorkflow,
			runspec.QueueInput{Project: project, Workspace: ws}); err != nil {
			t.Fatalf("%s queues %s: %v", who, id, err)
		}
	}
	const (
		danID   = "00000000-0000-4000-8000-00000000000d"
		aliceID = "00000000-0000-4000-8000-00000000000a"
		goneID  = "00000000-0000-4000-8000-00000000000e"
	)
	enqueue("local:dan", danID, "from-dan")
	enqueue("local:alice", aliceID, "from-alice")
	enqueue("local:dan", goneID, "never")
	if err := p.as["local:alice"].SignalWorkflow(p.ctx, queueID, "", runspec.DequeueSignal, runspec.Dequeue{ID: goneID, Reason: "not this one", By: "security-team@corp"}); err != nil {
		t.Fatal(err)
	}
	st := p.waitQueue(queueID, "the head blocked by alice's own run and the third entry removed", func(st runspec.QueueStatus) bool {
		r, _ := st.Find(goneID)
		return st.Blocked != "" && r.State == runspec.QueueRemoved
	})
	if len(st.Waiting) != 2 || st.Waiting[0].ID != danID || st.Waiting[0].Position != 1 || st.Waiting[1].ID != aliceID || st.Waiting[1].Position != 2 {
		t.Fatalf("waiting %+v, want dan's at 1 and alice's at 2", st.Waiting)
	}
	if r, _ := st.Find(goneID); r.RemovedBy == nil || r.RemovedBy.Name != "local:alice" || !r.RemovedBy.Verified || r.QueuedBy.Name != "local:dan" {
		t.Errorf("removed entry %+v: want queued by local:dan, removed by local:alice, verified", r)
	}

	if _, err := p.answer("local:alice", holder, true); err != nil {
		t.Fatalf("alice approves her run: %v", err)
	}
	if err := holder.Get(p.ctx, nil); err != nil {
		t.Fatalf("alice's run: %v", err)
	}
	st = p.waitQueue(queueID, "both queued runs to start", func(st runspec.QueueStatus) bool {
		a, _ := st.Find(aliceID)
		return a.State == runspec.QueueStarted
	})
	for id, who := range map[string]string{danID: "local:dan", aliceID: "local:alice"} {
		r, _ := st.Find(id)
		if err := p.tc.GetWorkflow(p.ctx, r.WorkflowID, r.RunID).Get(p.ctx, nil); err != nil {
			t.Fatalf("queued run %s: %v", id, err)
		}
		// Filed under who queued it, for their quota of runs in flight.
		d, err := p.tc.DescribeWorkflowExecution(p.ctx, r.WorkflowID, r.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[runspec.AttrStartedBy].GetData()); got != `"`+who+`"` {
			t.Errorf("queued run %s filed under %s, want %q", id, got, who)
		}
	}
	for rev, want := range map[int]string{2: "local:dan", 3: "local:alice"} {
		r, err := p.h.backend.GetRelease(p.ctx, project, ws, rev)
		if err != nil {
			t.Fatal(err)
		}
		if r.Phase != engine.PhaseSucceeded || r.StartedBy == nil || r.StartedBy.Name != want || !r.StartedBy.Verified {
			t.Errorf("revision %d: %s, started by %+v, want succeeded and %s, verified", rev, r.Phase, r.StartedBy, want)
		}
		if want == "local:dan" && (r.State == nil || len(r.State.Resources) != 1 || !strings.HasSuffix(r.State.Resources[0].ID, ":from-dan")) {
			t.Errorf("revision 2 records %+v, want dan's ConfigMap", r.State)
		}
	}
	if latest, err := p.h.backend.LatestReleaseHead(p.ctx, project, ws); err != nil || latest.Revision != 3 {
		t.Errorf("latest revision %+v (%v), want 3: the removed entry must not run", latest, err)
	}

	// Entries come with signals the frontend stamps, never in a start's input.
	forged := runspec.QueueInput{Project: "forged", Workspace: ws, Waiting: []runspec.QueuedCarry{{
		Entry:   runspec.QueueEntry{ID: danID, WorkflowType: runspec.ApplyWorkflow, Input: runspec.RunInput{Project: "forged", Workspace: ws}},
		Subject: runspec.Subject{Name: "security-team@corp", Roles: []string{"admin"}, Verified: true}}}}
	run, err := p.as["local:dan"].ExecuteWorkflow(p.ctx, client.StartWorkflowOptions{ID: runspec.QueueWorkflowID("forged", ws), TaskQueue: runspec.TaskQueue},
		runspec.QueueWorkflow, forged)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(p.ctx, nil); err == nil || !strings.Contains(err.Error(), "started with entries in its input: refused") {
		t.Errorf("a Queue started with entries: %v, want refused", err)
	}
}

// waitQueue queries queue id until cond holds.
func (p *peopleTest) waitQueue(id, what string, cond func(runspec.QueueStatus) bool) runspec.QueueStatus {
	p.t.Helper()
	for {
		var st runspec.QueueStatus
		v, err := p.tc.QueryWorkflow(p.ctx, id, "", runspec.QueueQuery)
		if err == nil {
			err = v.Get(&st)
		}
		if err == nil && cond(st) {
			return st
		}
		if p.ctx.Err() != nil {
			p.t.Fatalf("waiting for %s: %+v (%v)", what, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// recordQueueHistory records a run queue (run-queue): two queued applies,
// the first held up by an apply the queue did not start (a failed child
// start and a retry) until it is approved, then both started in order as
// children, each waited for; the queue is saved while it waits, empty, for
// more (queueIdle).
func recordQueueHistory(t *testing.T, tc client.Client, b *local.Backend, only map[string]bool) {
	const name = "run-queue"
	if *recordOnly != "" && !only[name] {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const project, ws = "q", "w"
	put := func(r engine.Resource) string {
		hash, err := b.PutSpec(ctx, &engine.Spec{Resources: []engine.Resource{r}})
		if err != nil {
			t.Fatal(err)
		}
		return hash
	}
	holder, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID(project, ws), TaskQueue: runspec.TaskQueue},
		runspec.ApplyWorkflow, runspec.RunInput{Project: project, Workspace: ws, SpecHash: put(cm("q0"))})
	if err != nil {
		t.Fatal(err)
	}
	awaitApprovalStage(t, tc, holder)
	queueID := runspec.QueueWorkflowID(project, ws)
	var queue client.WorkflowRun
	for i, id := range []string{"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"} {
		e := runspec.QueueEntry{ID: id, WorkflowType: runspec.ApplyWorkflow, Summary: "recorded",
			Input: runspec.RunInput{Project: project, Workspace: ws, SpecHash: put(cm(fmt.Sprintf("q%d", i+1))), AutoApprove: true}}
		if queue, err = tc.SignalWithStartWorkflow(ctx, queueID, runspec.EnqueueSignal, e, client.StartWorkflowOptions{ID: queueID, TaskQueue: runspec.TaskQueue},
			runspec.QueueWorkflow, runspec.QueueInput{Project: project, Workspace: ws}); err != nil {
			t.Fatal(err)
		}
	}
	status := func() runspec.QueueStatus {
		var st runspec.QueueStatus
		if v, err := tc.QueryWorkflow(ctx, queueID, "", runspec.QueueQuery); err == nil {
			_ = v.Get(&st)
		}
		return st
	}
	for st := status(); st.Blocked == ""; st = status() {
		if ctx.Err() != nil {
			t.Fatal("the queue never found the stack held")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := sendApproval(tc, holder, runspec.ApprovalRequest{Approve: true, By: "recorder"}); err != nil {
		t.Fatal(err)
	}
	for st := status(); len(st.Waiting) > 0 || len(st.Recent) < 2; st = status() {
		if ctx.Err() != nil {
			t.Fatalf("the queued runs never ended: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	saveHistory(t, tc, queue, name)
}
