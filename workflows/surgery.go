package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// recordSurgery is the change of a Forget or Move run: its release came with
// the change list (CreateRelease checked the IDs against the prior release,
// which the run's lock keeps final), which is approved as an apply's plan
// would be, then written in one step (RecordSurgery). Nothing is previewed
// or applied: nothing live changes, so there is no live state to re-check
// after the approval, and plan policies, which judge changes to live
// resources, do not apply.
func (r *run) recordSurgery(ctx workflow.Context, rel activities.ReleaseInfo) ([]engine.Change, error) {
	if v := changeVersion(ctx, surgeryChange, surgeryVersion); v < surgeryVersion {
		return nil, fmt.Errorf("a %s run needs workflow version %s", r.op, surgeryChange)
	}
	changes := rel.Surgery
	if len(changes) == 0 {
		return nil, fmt.Errorf("revision %d: the %s changes nothing", rel.Key.Revision, r.op)
	}
	r.progress.Nodes = make([]runspec.Node, len(changes))
	r.seq++
	r.nodeSeq = make([]uint64, len(changes))
	for i, c := range changes {
		r.nodeSeq[i] = r.seq
		r.progress.Nodes[i] = runspec.Node{ID: c.ID, Status: runspec.NodePending, Action: c.Action}
	}
	r.recordChanges(changes)
	r.progress.Changes, r.progress.Digest = changes, engine.PlanDigest(changes)
	if r.in.AutoApprove {
		if err := r.autoApprove(ctx); err != nil {
			return changes, err
		}
	} else if err := r.awaitApproval(ctx, rel.Key); err != nil {
		return changes, err
	}
	if err := r.checkStop(); err != nil {
		return changes, err
	}
	r.setStage(runspec.StageApplying, len(changes))
	if err := workflow.ExecuteActivity(step(ctx, string(engine.PhaseApplying)), acts.SetReleasePhase,
		activities.SetPhaseInput{Key: rel.Key, Phase: engine.PhaseApplying, People: r.people, Audit: r.audits}).Get(ctx, nil); err != nil {
		return changes, err
	}
	err := workflow.ExecuteActivity(step(ctx, "record "+r.op), acts.RecordSurgery, activities.SurgeryInput{Key: rel.Key}).Get(ctx, nil)
	for i := range changes {
		n := r.node(i)
		n.Finished = workflow.Now(ctx)
		if err != nil {
			n.Status, n.Error = runspec.NodeFailed, rootMessage(err)
			continue
		}
		n.Status = runspec.NodeSucceeded
		r.stepDone()
	}
	return changes, err
}
