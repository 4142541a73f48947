package release

import (
	"context"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// TestApplyRecordsTheSpecsMoves: an apply whose spec moves a recorded
// resource (stack.yaml's moved:) starts from a move revision Begin made and
// finished, so its prior state records the resource under the new ID; a
// retry of Begin returns the same apply release; an apply whose moves no
// longer apply makes no move revision, and one whose both IDs are recorded
// is refused naming the entry.
func TestApplyRecordsTheSpecsMoves(t *testing.T) {
	ctx := context.Background()
	m, b := newSurgeryManager(t)
	old := engine.Resource{ID: "hashicorp:terraform:terraform_data:old", Type: engine.Terraform, Attributes: map[string]any{"input": "x"},
		Extensions: map[string]any{"provider": "registry.terraform.io/hashicorp/terraform/1.0.0", "resourceType": "terraform_data"}}
	other := surgeryCM("c")
	h1, err := b.PutSpec(ctx, &engine.Spec{Resources: []engine.Resource{old, other}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateRelease(ctx, &engine.Release{Project: "p", Workspace: "w", Revision: 1, Operation: engine.OperationApply, Phase: engine.PhaseSucceeded,
		SpecHash: h1, State: &engine.State{Resources: []engine.Resource{old, other}}}); err != nil {
		t.Fatal(err)
	}
	renamed := old
	renamed.ID = "hashicorp:terraform:terraform_data:new"
	moved := &engine.Spec{Resources: []engine.Resource{renamed, other}, Moved: []engine.Moved{{From: old.ID, To: renamed.ID}}}
	if err := moved.Validate(); err != nil {
		t.Fatal(err)
	}
	h2, err := b.PutSpec(ctx, moved)
	if err != nil {
		t.Fatal(err)
	}
	in := BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationApply, SpecHash: h2, WorkflowID: "wf", RunID: "r2",
		StartedBy: &engine.Actor{Name: "local:dan"}}
	info, err := m.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if info.Key.Revision != 3 || info.PriorRevision != 2 {
		t.Fatalf("the apply is revision %d from %d, want 3 from the move revision 2", info.Key.Revision, info.PriorRevision)
	}
	again, err := m.Begin(ctx, in)
	if err != nil || again.Key != info.Key {
		t.Fatalf("Begin retried: %+v, %v; want revision 3 again", again.Key, err)
	}
	mv, err := b.GetRelease(ctx, "p", "w", 2)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range mv.State.Resources {
		ids[r.ID] = true
	}
	if mv.Operation != engine.OperationMove || mv.Phase != engine.PhaseSucceeded || !ids[renamed.ID] || ids[old.ID] || !ids[other.ID] ||
		mv.StartedBy == nil || mv.StartedBy.Name != "local:dan" || !strings.Contains(mv.Reason, "moved: "+old.ID+" to "+renamed.ID) {
		t.Errorf("revision 2: %s %s, state %v, started by %+v, reason %q", mv.Operation, mv.Phase, ids, mv.StartedBy, mv.Reason)
	}
	if _, err := m.Finish(ctx, FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
		t.Fatal(err)
	}

	// Revision 3 records both under their new IDs (as its apply would);
	// the next apply of the same spec has nothing to move.
	if err := b.CreateRelease(ctx, &engine.Release{Project: "p", Workspace: "w", Revision: 4, Operation: engine.OperationApply, Phase: engine.PhaseSucceeded,
		SpecHash: h2, State: &engine.State{Resources: []engine.Resource{renamed, other}}}); err != nil {
		t.Fatal(err)
	}
	next, err := m.Begin(ctx, BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationApply, SpecHash: h2, WorkflowID: "wf", RunID: "r5"})
	if err != nil || next.Key.Revision != 5 || next.PriorRevision != 4 {
		t.Fatalf("an apply with nothing left to move: %+v, %v; want revision 5 from 4", next, err)
	}
	if _, err := m.Finish(ctx, FinishInput{Key: next.Key, Phase: engine.PhaseSucceeded}); err != nil {
		t.Fatal(err)
	}

	// Both IDs recorded: refused, naming the entry.
	if err := b.CreateRelease(ctx, &engine.Release{Project: "p", Workspace: "w", Revision: 6, Operation: engine.OperationApply, Phase: engine.PhaseSucceeded,
		SpecHash: h2, State: &engine.State{Resources: []engine.Resource{old, renamed, other}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Begin(ctx, BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationApply, SpecHash: h2, WorkflowID: "wf", RunID: "r7"}); err == nil ||
		!strings.Contains(err.Error(), "moved[0] (from "+old.ID+" to "+renamed.ID+"): both IDs are recorded") {
		t.Errorf("both IDs recorded: %v", err)
	}
}
