package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// undoClass says which undos may share a batch step: the class (batchClass)
// of the step that undoes c. A create is undone by a delete, so the undo of a
// Namespace's create runs alone; an update or a delete by applying the prior
// again. Terraform undos run alone.
func undoClass(c engine.Change) string {
	undo := engine.Change{ID: c.ID, Type: c.Type, Action: engine.Update}
	if c.Action == engine.Create {
		undo.Action = engine.Delete
	}
	return batchClass(undo)
}

// compensate undoes the applied nodes of a failed apply: dependents before what
// they depend on (reverse DAG order), with the run's parallelism. An undo step
// that still fails after its retries is reported and the others go on; the
// original failure stays the release's error.
func (r *run) compensate(ctx workflow.Context, applied []int, changes []engine.Change, nodeInput func(int) activities.NodeInput) {
	r.setStage(runspec.StageCompensating, len(applied))
	r.compensation = &engine.Compensation{}
	pos := make(map[int32]int32, len(applied))
	for k, i := range applied {
		pos[int32(i)] = int32(k)
	}
	// Undoing node d waits for the undoing of every applied node that depends on d.
	waitFor := make([][]int32, len(applied))
	for k, i := range applied {
		for _, d := range r.plan.Nodes[i].Deps {
			if p, ok := pos[d]; ok {
				waitFor[p] = append(waitFor[p], int32(k))
			}
		}
	}
	// Undoing stops short of the history's limit too, leaving room to finish.
	full := func() bool { return workflow.GetInfo(ctx).GetCurrentHistoryLength() >= compensationBudget }
	start := func(k int) workflow.Future {
		i := applied[k]
		in := activities.CompensateInput{NodeInput: nodeInput(i), Action: changes[i].Action}
		if in.Action == engine.Create {
			return workflow.ExecuteActivity(deleteStep(ctx, changes[i].Type, "undo create "+in.ID), acts.CompensateResource, in)
		}
		return workflow.ExecuteActivity(applyStep(ctx, changes[i].Type, "undo "+strings.ToLower(string(in.Action))+" "+in.ID), acts.CompensateResource, in)
	}
	done := func(k int, f workflow.Future) error {
		node := r.node(applied[k])
		defer r.stepDone()
		if err := f.Get(ctx, nil); err != nil {
			r.compensation.Errors = append(r.compensation.Errors, node.ID+": "+rootMessage(err))
			return nil
		}
		node.Status = runspec.NodeCompensated
		r.compensation.Resources = append(r.compensation.Resources, node.ID)
		return nil
	}
	var notUndone []int
	if changeVersion(ctx, compensateChange, compensateVersion) >= compensateVersion {
		notUndone = batchWalk{
			deps: waitFor, limit: r.in.Parallelism, maxBatch: maxBatch, stopped: full,
			work:  func(int) bool { return true },
			class: func(k int) string { return undoClass(changes[applied[k]]) },
			start: func(ks []int) []workflow.Future {
				if len(ks) == 1 { // one resource's undo, as before batches
					return []workflow.Future{start(ks[0])}
				}
				nodes := make([]int, len(ks))
				for j, k := range ks {
					nodes[j] = applied[k]
				}
				return r.startUndoBatch(ctx, nodes, changes, nodeInput)
			},
			// A chain of undos (each the only one waiting for the one
			// before) goes on in one step once the history is long, as the
			// apply's chains do: an undo is done (a delete gone, a prior
			// applied) before the next of its step starts.
			follows: func(int) bool { return longHistory(ctx, 0) },
			done:    done,
		}.run(ctx)
	} else {
		notUndone = walk(ctx, waitFor, r.in.Parallelism, full, start, done)
	}
	if len(notUndone) > 0 {
		r.compensation.Errors = append(r.compensation.Errors, fmt.Sprintf("%d resources not undone: the run's history reached %d events, near Temporal's limit of %d per run",
			len(notUndone), workflow.GetInfo(ctx).GetCurrentHistoryLength(), historyLimit))
	}
}

// startUndoBatch starts one CompensateResources over nodes (two or more, of
// one undoClass) and returns one future per node, ready with its undo's
// outcome once the batch returns. A node the batch never came to (it failed
// on the one before, after its retries) is not undone, and says why.
func (r *run) startUndoBatch(ctx workflow.Context, nodes []int, changes []engine.Change, nodeInput func(int) activities.NodeInput) []workflow.Future {
	b := r.batchInput(nodes, nodeInput)
	in := activities.CompensateBatchInput{Node: b.Node, IDs: b.IDs, Actions: make([]engine.Action, len(nodes))}
	for k, i := range nodes {
		in.Actions[k] = changes[i].Action
	}
	del := in.Actions[0] == engine.Create
	verb := "undo apply"
	if del {
		verb = "undo create"
	}
	// On ctx (the run's work context) a cancel does not reach the batch: a
	// cancelled run is still put back.
	step := batchStep(ctx, del, batchSummary(verb, in.IDs))
	return fanOut(ctx, step, acts.CompensateResources, in, len(nodes), func(ctx workflow.Context, f workflow.Future, sets []workflow.Settable) {
		res, err := batchResult(ctx, f)
		for k := range nodes {
			switch {
			case k < len(res.Outcomes) && res.Outcomes[k].Error != "":
				sets[k].Set(nil, errors.New(res.Outcomes[k].Error))
			case k < len(res.Outcomes):
				sets[k].Set(nil, nil)
			case k == len(res.Outcomes) && err != nil:
				sets[k].Set(nil, err)
			case err != nil:
				sets[k].Set(nil, fmt.Errorf("not undone: the undo of %s before it failed", in.IDs[len(res.Outcomes)]))
			default:
				sets[k].Set(nil, errors.New("not undone: the batch stopped before it"))
			}
		}
	})
}
