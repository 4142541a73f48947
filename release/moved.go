package release

import (
	"context"
	"fmt"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// recordMove records the first of the apply's spec's moves (stack.yaml's
// moved:) that applies to revision prior as a move revision of its own,
// made and finished here, as `kumo release mv` would make it, and reports
// whether there was one. The apply then plans from the moved record: the
// resource is neither deleted under its old ID nor created under its new one.
// Nothing live changes, so it needs no approval of its own: the entry was
// written in the stack, and the apply it precedes is approved as usual.
func (m *Manager) recordMove(ctx context.Context, in BeginInput, prior int) (bool, error) {
	spec, err := m.spec(ctx, in.SpecHash)
	if err != nil {
		return false, err
	}
	if len(spec.Moved) == 0 {
		return false, nil
	}
	rel, err := m.priorRelease(ctx, in.Project, in.Workspace, prior)
	if err != nil {
		return false, err
	}
	recorded := map[string]bool{}
	if rel.State != nil {
		for _, r := range rel.State.Resources {
			recorded[r.ID] = true
		}
	}
	move, err := spec.NextMove(recorded)
	if err != nil {
		return false, kindf(ErrInvalid, "revision %d of %s/%s: %v", prior, in.Project, in.Workspace, err)
	}
	if move == nil {
		return false, nil
	}
	surgery := &engine.Surgery{Move: move}
	specHash, _, err := m.beginSurgery(ctx, BeginInput{Project: in.Project, Workspace: in.Workspace, Operation: engine.OperationMove, Surgery: surgery}, prior)
	if err != nil {
		return false, err
	}
	now := time.Now().UTC()
	r := &engine.Release{
		Project: in.Project, Workspace: in.Workspace, Stack: in.Stack,
		Revision: prior + 1, Operation: engine.OperationMove, Phase: engine.PhasePreviewing,
		SpecHash: specHash, Reason: fmt.Sprintf("moved: %s to %s, declared by the spec the apply in the next revision deploys", move.From, move.To),
		CreateTime: now, ModifyTime: now, WorkflowID: in.WorkflowID, RunID: in.RunID,
	}
	r.StartedBy, r.Surgery, r.Git = in.StartedBy, surgery, in.Git
	if err := m.backend.CreateRelease(ctx, r); err != nil {
		return false, err
	}
	return true, m.finishMove(ctx, r)
}

// finishMove writes a move revision's records and marks it succeeded; called
// again (a retry after a crash) it does the same.
func (m *Manager) finishMove(ctx context.Context, r *engine.Release) error {
	if r.Phase.Final() {
		return nil
	}
	key := backend.KeyOf(r)
	if _, err := m.RecordSurgery(ctx, key); err != nil {
		return err
	}
	_, err := m.Finish(ctx, FinishInput{Key: key, Phase: engine.PhaseSucceeded})
	return err
}
