package workflows

import (
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// Apply makes the workspace match the spec: create the release, preview every
// resource, wait for approval, apply in dependency order (deleting what the spec
// dropped), and finish the release as succeeded or failed.
func Apply(ctx workflow.Context, in runspec.RunInput) (runspec.Result, error) {
	return mutate(ctx, in, engine.OperationApply)
}

// Rollback is an apply of an earlier revision's spec, recorded as a new revision
// with rollbackOf: the change is previewed against what is live and applied in
// dependency order, deleting what that revision did not have.
func Rollback(ctx workflow.Context, in runspec.RunInput) (runspec.Result, error) {
	return mutate(ctx, in, engine.OperationRollback)
}

// Refresh records what is live as a new revision of the latest release's
// spec, changing nothing live: the release, a preview that lists what differs
// from the record (drifted, deleted out of band), the approval as for an
// apply, then every resource's record made what is live (refreshLive).
func Refresh(ctx workflow.Context, in runspec.RunInput) (runspec.Result, error) {
	return mutate(ctx, in, engine.OperationRefresh)
}

// Forget drops resources from the latest release's record, leaving them live
// and no longer managed (kumo release forget), and Move records one under
// another ID of the same live object (kumo release mv): a new revision, with
// approval as for an apply, that changes nothing live (recordSurgery).
func Forget(ctx workflow.Context, in runspec.RunInput) (runspec.Result, error) {
	return mutate(ctx, in, engine.OperationForget)
}

// Move: see Forget.
func Move(ctx workflow.Context, in runspec.RunInput) (runspec.Result, error) {
	return mutate(ctx, in, engine.OperationMove)
}

// Destroy deletes everything the latest release recorded, dependents first.
func Destroy(ctx workflow.Context, in runspec.RunInput) (runspec.Result, error) {
	in.SpecHash = ""
	return mutate(ctx, in, engine.OperationDestroy)
}

func mutate(ctx workflow.Context, in runspec.RunInput, op engine.Operation) (runspec.Result, error) {
	r, err := newRun(ctx, in, string(op))
	if err != nil {
		return runspec.Result{}, err
	}
	r.initEvents(ctx)
	// Activities run on r.work: a cancel stops the run between resources
	// instead of abandoning the ones in flight.
	work := r.work
	// Generating comes before the release: a stack that does not generate
	// records nothing; neither does a run cancelled before it has a release.
	if err := r.generateSpec(work); err != nil {
		return r.end(ctx, runspec.Result{}, r.finalStatus(err), err)
	}
	if err := r.checkStop(); err != nil {
		return r.end(ctx, runspec.Result{}, runspec.StatusCancelled, err)
	}
	in = r.in
	info := workflow.GetInfo(ctx)
	var rel activities.ReleaseInfo
	r.release = newReleaseSteps(work)
	err = r.release.start(work, shortOptions("create release"), acts.CreateRelease, activities.CreateReleaseInput{
		Project: in.Project, Workspace: in.Workspace, Stack: in.Stack, Operation: op, SpecHash: in.SpecHash,
		RollbackOf: in.RollbackOf, Reason: in.Reason, Label: in.Label, WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
		StartedBy: r.people.StartedBy, Chart: in.Chart, Surgery: in.Surgery, Target: in.Targeting(), Git: in.Git,
	}).Get(work, &rel)
	if err != nil {
		return r.end(ctx, runspec.Result{}, r.finalStatus(err), err)
	}
	r.progress.Revision = rel.Key.Revision
	r.releaseIn = info.GetCurrentHistoryLength()
	if rel.PreviewRecorded {
		r.keptPreview = &rel.Key
	}
	r.rules = runspec.ApprovalRules{Policy: rel.Approval, Project: in.Project, Workspace: in.Workspace,
		Run: info.WorkflowExecution.ID, Starter: *r.people.StartedBy}

	// From here on a release exists, and every way out must finish it.
	var changes []engine.Change
	runErr := workflow.UpsertTypedSearchAttributes(work, RevisionAttr.ValueSet(int64(rel.Key.Revision)))
	if runErr == nil {
		changes, runErr = r.change(work, rel, op)
	}
	status := r.finalStatus(runErr)
	if status == runspec.StatusCancelled && r.stopped {
		runErr = r.stopErr() // the reason, whichever step noticed the cancel
	}
	phase := engine.PhaseSucceeded
	msg := ""
	if runErr != nil {
		phase, msg = engine.PhaseFailed, rootMessage(runErr)
	}
	// Finish even if the run was cancelled: a release must never stay in progress.
	finishCtx, _ := workflow.NewDisconnectedContext(ctx)
	if c := r.people.CancelledBy; c != nil {
		r.auditAt(ctx, c.Time, c.Name, c.Verified, "cancel", true, c.Reason)
	}
	steps := r.release.finish(len(r.plan.Nodes))
	if status == runspec.StatusCancelled {
		// A cancelled run finishes in an ordinary step: run as a local step
		// in the task that took the cancel, the run's end was executed twice
		// (once more when that task was retried), counting it twice.
		steps.local = false
	}
	err = steps.start(finishCtx, finishOptions(), acts.FinishRelease, activities.FinishInput{
		Key: rel.Key, Phase: phase, Error: msg, Compensation: r.compensation, People: r.people, Audit: r.audits, Hooks: r.hookRuns,
	}).Get(finishCtx, nil)
	result := runspec.Result{Revision: rel.Key.Revision, Phase: phase, Digest: r.progress.Digest, Policies: r.progress.Policies, Error: msg, Compensation: r.compensation}
	withChanges(&result, changes)
	withOutcome(&result, r.progress)
	if err != nil {
		return r.end(ctx, result, runspec.StatusFailed, fmt.Errorf("finish revision %d: %w", rel.Key.Revision, err))
	}
	if r.tracked {
		result.Status = status
	}
	if runErr != nil {
		// The workflow fails too, so failed runs stand out in the Web UI.
		return r.end(ctx, result, status, temporal.NewNonRetryableApplicationError(fmt.Sprintf("revision %d failed: %s", rel.Key.Revision, msg), activities.ErrTypeNode, nil, result))
	}
	return r.end(ctx, result, status, nil)
}

// change runs plan, preview, approval and the DAG walk of one release.
func (r *run) change(ctx workflow.Context, rel activities.ReleaseInfo, op engine.Operation) ([]engine.Change, error) {
	if err := r.checkAutoApprove(ctx); err != nil {
		return nil, err
	}
	if err := r.checkProtectedOverride(ctx); err != nil {
		return nil, err
	}
	if op == engine.OperationForget || op == engine.OperationMove {
		return r.recordSurgery(ctx, rel)
	}
	if err := r.planGraph(ctx, rel.SpecHash, rel.PriorRevision); err != nil {
		return nil, err
	}
	r.deferRefresh = changeVersion(ctx, previewRefreshChange, previewRefreshVersion) >= previewRefreshVersion
	nodeInput := func(i int) activities.NodeInput {
		n := r.plan.Nodes[i]
		return activities.NodeInput{Key: rel.Key, SpecHash: rel.SpecHash, PriorRevision: rel.PriorRevision, ID: n.ID, Delete: n.Delete, Settings: r.in.Settings,
			Wait: r.in.Wait, Timeout: r.in.Timeout, AllowProtectedDelete: r.in.AllowProtectedDelete}
	}
	if err := r.checkStop(); err != nil {
		return nil, err
	}
	changes, err := r.preview(ctx, nodeInput)
	if err != nil {
		return nil, err
	}
	for i := range changes {
		r.node(i).Action = changes[i].Action
	}
	r.progress.Changes, r.progress.Digest = changes, engine.TargetedDigest(engine.PlanDigest(changes), r.in.Targeting())
	r.noPolicies = !rel.Policies
	if err := r.checkPolicies(ctx, rel.Key, rel.SpecHash, rel.PriorRevision, changes); err != nil {
		return changes, err
	}
	if err := r.approve(ctx, rel.Key, changes, nodeInput); err != nil {
		return changes, err
	}
	if err := r.checkStop(); err != nil {
		return changes, err
	}
	if op == engine.OperationRefresh {
		return changes, r.refreshLive(ctx, changes, nodeInput)
	}

	phase, stage := engine.PhaseApplying, runspec.StageApplying
	if op == engine.OperationDestroy {
		phase, stage = engine.PhaseDestroying, runspec.StageDestroying
	}
	r.setStage(stage, len(r.plan.Nodes))
	steps, keep := r.phaseSteps(ctx, changes)
	in := activities.SetPhaseInput{Key: rel.Key, Phase: phase, People: r.people, Audit: r.audits}
	if keep {
		in.Preview = &backend.RecordedPreview{Changes: changes, Stale: slices.Clone(r.stale)}
	}
	if err := steps.start(ctx, shortOptions(string(phase)), acts.SetReleasePhase, in).Get(ctx, nil); err != nil {
		return changes, err
	}
	if err := r.refreshStale(ctx, nodeInput); err != nil {
		return changes, err
	}
	// Hooks: the pre hooks before anything changes, the sync hooks with
	// the wave-ordered objects, the post hooks once all is healthy, and
	// the SyncFail hooks when any of that failed.
	hooks := r.newHookSteps(ctx, rel, op)
	if err := hooks.run(ctx, engine.HookPointPre); err != nil {
		return changes, hooks.failed(ctx, err)
	}
	sync := hooks.start(ctx, engine.HookPointSync)
	applied, err := r.walkChanges(ctx, changes, nodeInput)
	if serr := hooks.wait(ctx, sync); err == nil {
		err = serr
	}
	if err == nil {
		err = hooks.run(ctx, engine.HookPointPost)
	}
	err = hooks.failed(ctx, err)
	if err != nil && r.in.RollbackOnFailure && op != engine.OperationDestroy {
		r.compensate(ctx, applied, changes, nodeInput)
	}
	return changes, err
}

// walkChanges applies or deletes each changed node in dependency order; unchanged
// nodes cost no activity.
// It returns the nodes it changed, in the order they finished: the saga's list of
// steps to undo should the walk fail.
func (r *run) walkChanges(ctx workflow.Context, changes []engine.Change, nodeInput func(int) activities.NodeInput) (applied []int, _ error) {
	deps := make([][]int32, len(r.plan.Nodes))
	for i, n := range r.plan.Nodes {
		deps[i] = n.Deps
	}
	var failures nodeErrors
	wait := waitsForHealth(ctx)
	waitUnchanged := wait && anyPendingWait(changes) &&
		changeVersion(ctx, unchangedWaitChange, unchangedWaitVersion) >= unchangedWaitVersion
	// pending: node i changes nothing but waits for its resource's health.
	pending := func(i int) bool {
		return waitUnchanged && changes[i].Action == engine.UnChanged && changes[i].Wait != nil
	}
	steps := newNodeSteps(ctx)
	start := func(i int) workflow.Future {
		if pending(i) {
			node := r.node(i)
			node.Status, node.Started = runspec.NodeRunning, workflow.Now(ctx)
			return r.waitUnchanged(ctx, []int{i}, changes, nodeInput)[0]
		}
		if changes[i].Action == engine.UnChanged {
			return nil
		}
		node := r.node(i)
		node.Status, node.Started = runspec.NodeRunning, workflow.Now(ctx)
		if changes[i].Action == engine.Delete {
			return steps.start(ctx, changes[i], nodeInput(i))
		}
		return r.applyNode(ctx, wait, steps, i, nodeInput(i), changes[i])
	}
	notRun := 0
	done := func(i int, f workflow.Future) error {
		node := r.node(i)
		defer r.stepDone()
		if f == nil {
			node.Status = runspec.NodeUnchanged
			return nil
		}
		err := f.Get(ctx, nil)
		if pending(i) {
			// Nothing was applied: a failed wait leaves nothing to undo.
			delete(r.waitFailed, i)
			if node.Finished.IsZero() {
				node.Finished = workflow.Now(ctx)
			}
			if err != nil {
				node.Status, node.Error = runspec.NodeFailed, rootMessage(err)
				failures.add(node.ID, err)
				return err
			}
			node.Status = runspec.NodeUnchanged
			return nil
		}
		if errors.Is(err, errNotRun) {
			node.Status = runspec.NodeSkipped
			notRun++
			return err // its dependents must not start either
		}
		if node.Finished.IsZero() {
			node.Finished = workflow.Now(ctx) // a batch's resource has its own (timeOutcomes)
		}
		if err != nil {
			node.Status, node.Error = runspec.NodeFailed, rootMessage(err)
			failures.add(node.ID, err)
			if r.waitFailed[i] { // applied, but never healthy: undo it too
				applied = append(applied, i)
			}
			return err
		}
		node.Status = runspec.NodeSucceeded
		applied = append(applied, i) // its compensation, registered right after the step
		return nil
	}
	var notStarted []int
	if changeVersion(ctx, batchChange, batchVersion) >= batchVersion {
		appliedDeps := r.appliedDeps(ctx, wait)
		freeWaits := wait && changeVersion(ctx, waitSlotsChange, waitSlotsVersion) >= waitSlotsVersion
		if freeWaits && r.applied == nil {
			r.applied = workflow.NewBufferedChannel(ctx, len(r.plan.Nodes))
		}
		follows, chainMin := r.chainFollows(ctx, changes, wait, steps)
		// Each node's class, once: the walk asks it of every ready node it
		// looks at for each step, and a delete's parses its ID.
		classes := make([]string, len(changes))
		for i := range changes {
			if pending(i) {
				classes[i] = "wait"
			} else {
				classes[i] = batchClass(changes[i])
			}
		}
		// running marks the nodes of a step that starts (a single node's
		// step marks its own).
		running := func(nodes []int) {
			for _, i := range nodes {
				node := r.node(i)
				node.Status, node.Started = runspec.NodeRunning, workflow.Now(ctx)
			}
		}
		notStarted = batchWalk{
			appliedDeps: appliedDeps, applied: r.applied, freeWaits: freeWaits,
			deps: deps, limit: r.in.Parallelism, maxBatch: maxBatch, stopped: r.stopTest(ctx),
			work:  func(i int) bool { return changes[i].Action != engine.UnChanged || pending(i) },
			class: func(i int) string { return classes[i] },
			start: func(nodes []int) []workflow.Future {
				if len(nodes) == 1 { // one resource's step, as before batches
					return []workflow.Future{start(nodes[0])}
				}
				running(nodes)
				if pending(nodes[0]) { // a class: all of them wait
					return r.waitUnchanged(ctx, nodes, changes, nodeInput)
				}
				return r.startBatch(ctx, nodes, changes, nodeInput, wait, steps, 1)
			},
			maxPool: localBatchMax,
			pooled: func(i int) bool {
				return !pending(i) && steps.pools(ctx, len(r.plan.Nodes))
			},
			startPool: func(nodes []int, parallel int) []workflow.Future {
				running(nodes)
				return r.startBatch(ctx, nodes, changes, nodeInput, wait, steps, parallel)
			},
			follows:  notPending(follows, pending),
			chainMin: chainMin,
			done:     done,
		}.run(ctx)
		r.applied = nil // a compensation's steps must not send to a walk that ended
	} else {
		notStarted = walk(ctx, deps, r.in.Parallelism, r.stopTest(ctx), start, done)
	}
	for _, i := range notStarted {
		r.node(i).Status = runspec.NodeSkipped
	}
	if err := failures.err(string(r.progress.Stage)); err != nil {
		return applied, err
	}
	if len(notStarted) > 0 || notRun > 0 {
		if r.outOfHistory && !r.stopped {
			return applied, historyErr(ctx, len(notStarted)+notRun)
		}
		if !r.stopped {
			return applied, fmt.Errorf("%s stopped with %d resources not run", r.progress.Stage, len(notStarted)+notRun)
		}
		// stopped by a cancel: the resources in flight finished
		return applied, r.stopErr()
	}
	return applied, nil
}

// appliedDeps returns, by node, the dependencies it needs only applied, and
// opens r.applied for the steps to say which nodes are: nil, and nothing
// opened, when the plan has none, the run does not wait for health (then
// applied is done), or it replays a run recorded before appliedEdgesChange.
func (r *run) appliedDeps(ctx workflow.Context, wait bool) [][]int32 {
	has := false
	for _, n := range r.plan.Nodes {
		has = has || len(n.Applied) > 0
	}
	if !has || !wait || changeVersion(ctx, appliedEdgesChange, appliedEdgesVersion) < appliedEdgesVersion {
		return nil
	}
	deps := make([][]int32, len(r.plan.Nodes))
	for i, n := range r.plan.Nodes {
		deps[i] = n.Applied
	}
	// Each node is applied once: the buffer takes every send without
	// blocking the step that sends.
	r.applied = workflow.NewBufferedChannel(ctx, len(r.plan.Nodes))
	return deps
}

// rootMessage is the message of the innermost application error (what the activity
// said), without the activity/retry wrapping Temporal adds around it.
func rootMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return "timed out: " + err.Error()
	}
	return err.Error()
}
