package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
)

// acts is only used for method references: activities run on workers, never here.
var acts *activities.Activities

// run is the state one workflow execution keeps and exposes through ProgressQuery.
type run struct {
	in       RunInput
	progress Progress
	plan     activities.Plan
	// compensation is set once a failed apply has been undone.
	compensation *engine.Compensation
	control
	// waitFailed marks nodes applied whose wait for health then failed.
	waitFailed map[int]bool
}

func newRun(ctx workflow.Context, in RunInput) (*run, error) {
	if in.Parallelism <= 0 {
		in.Parallelism = defaultParallel
	}
	r := &run{in: in, progress: Progress{Stage: StagePlanning}}
	r.init(withRuntimeQueue(ctx, in.Settings.TaskQueue))
	err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) { return r.progress, nil })
	return r, err
}

func (r *run) planGraph(ctx workflow.Context, specHash string, prior int) error {
	err := workflow.ExecuteActivity(step(ctx, "plan"), acts.PlanGraph, activities.PlanInput{
		Project: r.in.Project, Workspace: r.in.Workspace, SpecHash: specHash, PriorRevision: prior,
	}).Get(ctx, &r.plan)
	if err != nil {
		return err
	}
	r.progress.Nodes = make([]Node, len(r.plan.Nodes))
	for i, n := range r.plan.Nodes {
		r.progress.Nodes[i] = Node{ID: n.ID, Status: NodePending}
	}
	return nil
}

// preview diffs every node (they are independent reads, so no DAG order).
func (r *run) preview(ctx workflow.Context, node func(i int) activities.NodeInput) ([]engine.Change, error) {
	r.setStage(StagePreview, len(r.plan.Nodes))
	changes := make([]engine.Change, len(r.plan.Nodes))
	var failures nodeErrors
	noDeps := make([][]int32, len(r.plan.Nodes))
	walk(ctx, noDeps, r.in.Parallelism, r.isStopped, func(i int) workflow.Future {
		in := node(i)
		return executeRead(ctx, r.plan.Nodes[i].Type, "preview "+in.ID, acts.PreviewResource, in)
	}, func(i int, f workflow.Future) error {
		err := f.Get(ctx, &changes[i])
		failures.add(r.plan.Nodes[i].ID, err)
		r.stepDone()
		return nil // keep previewing: the user sees every rejected resource at once
	})
	if err := r.checkStop(); err != nil {
		return nil, err
	}
	if err := failures.err("preview"); err != nil {
		return nil, err
	}
	r.markReferenceChanges(changes)
	r.recordChanges(changes)
	return changes, nil
}

// markReferenceChanges turns an unchanged node into an update when a resource it
// references is created or updated: its resolved values are only known after
// that apply, so it must be applied after it, not skipped. Nodes are in
// dependency order, so a chain of references is followed in one pass.
func (r *run) markReferenceChanges(changes []engine.Change) {
	for i, n := range r.plan.Nodes {
		if changes[i].Action != engine.UnChanged || n.Delete {
			continue
		}
		for _, j := range n.Refs {
			if a := changes[j].Action; a == engine.Create || a == engine.Update {
				changes[i].Action = engine.Update
				changes[i].Fields = append(changes[i].Fields, engine.FieldChange{
					Path: "(references " + changes[j].ID + ")", After: engine.KnownAfterApply,
				})
				break
			}
		}
	}
}

// nodeErrors collects per-resource failures into one error naming each resource.
type nodeErrors struct {
	msgs []string
}

func (e *nodeErrors) add(id string, err error) {
	if err == nil {
		return
	}
	msg := rootMessage(err)
	if !strings.Contains(msg, id) { // runtimes usually name the resource already
		msg = id + ": " + msg
	}
	e.msgs = append(e.msgs, msg)
}

func (e *nodeErrors) err(what string) error {
	switch len(e.msgs) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s failed: %s", what, e.msgs[0])
	}
	return fmt.Errorf("%s failed for %d resources:\n  %s", what, len(e.msgs), strings.Join(e.msgs, "\n  "))
}
