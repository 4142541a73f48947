package workflows

import "go.temporal.io/sdk/workflow"

// The workflow versions. A change to the commands a workflow issues would
// break the replay of runs recorded before it, so it is a workflow.GetVersion
// branch, named here by its change ID and its newest version. The IDs are
// recorded in histories (a Version marker, and the TemporalChangeVersion
// search attribute): never rename one. Each call (changeVersion, never
// workflow.GetVersion directly) stays where its branch is, in the order the
// run reaches it. A run recorded since shapeChange records only that
// change's marker and takes every change in shaped at its newest; the
// histories below name the runs recorded before it.
//
// Each change says what its newest version does, where its call is, and which
// recorded histories in testdata replay each branch: a history covers the new
// branch when it holds the change's marker, and the old one when its run
// reached the call without one (a run older than the change). Tags: "-vN" is
// a history recorded as of that shape (-record-tag); an untagged name is the
// first recording.
//
// Retiring an old branch, once no run that can take it is still open:
//
//  1. Check: with every worker on a release that has the change, no open run
//     started before the last older worker stopped (`temporal workflow list
//     --query 'ExecutionStatus="Running" AND StartTime < "<then>"'` lists
//     none). A run may wait RunInput.ApprovalTimeout for approval, 24 hours
//     unless set longer.
//  2. Delete from testdata the histories listed below as covering the old
//     branch: after step 3 they fail by design (GetVersion refuses a run
//     below its minimum). Keep those that hold the marker: they replay the
//     branch that stays.
//  3. Raise the call's minimum to the newest version (GetVersion(ctx, id,
//     xVersion, xVersion)) and delete the old branch. Keep the call: a run
//     older than the change then fails there instead of going on wrongly, and
//     a later change of the same code raises the version instead of needing a
//     new ID.
//  4. Update this file and run `go test -run Replay ./workflows/`.
//
// A later change of the same code gets version 2 (the call's maximum) and
// keeps a branch for 1, with histories recorded under a new -record-tag;
// unless the change is in shaped, whose versions are fixed: it gets a new
// change ID.
const (
	// statusChange: runs keep KumoStatus and the changes memo current,
	// describe themselves in the Web UI, and stop on a cancel without cutting
	// short the resources in flight (control.init, every Apply, Destroy,
	// Rollback and Preview). New: every tagged history of those, v2-* and
	// apply-queue. Old: apply-compensate, apply-create-and-fail,
	// apply-from-stack, apply-update-delete-ref, apply-wait,
	// approval-signal-approved, approval-signal-rejected, destroy, preview,
	// rollback.
	statusChange  = "kumo-status"
	statusVersion = workflow.Version(1)

	// runtimeQueueChange: a workspace's task queue takes the run's runtime
	// steps (withRuntimeQueue, reached only when the workspace names a queue).
	// New: apply-queue, apply-queue-v10. Old: none recorded (no run had a
	// queue before the change).
	runtimeQueueChange  = "runtime-queue"
	runtimeQueueVersion = workflow.Version(1)

	// planPagesChange: the plan comes page by page (PlanPage) instead of in
	// one PlanGraph result, which a plan of tens of thousands of resources
	// outgrows (planGraph). New: every -v7 and later. Old: the untagged,
	// -v3, -v4, -v5 and -v6 histories of runs that plan (all but generate
	// and drift).
	planPagesChange  = "plan-pages"
	planPagesVersion = workflow.Version(1)

	// previewRefreshChange: previews write nothing; an unchanged resource
	// whose live object differs from its record is listed, and refreshed
	// (RefreshResources) once the run is approved (change; Apply, Destroy and
	// Rollback only). New: their -v6 and later. Old: their untagged, -v3,
	// -v4 and -v5 histories.
	previewRefreshChange  = "preview-refresh"
	previewRefreshVersion = workflow.Version(1)

	// batchPreviewChange: Kubernetes resources are previewed in batches
	// (PreviewResources) instead of a local activity each (preview). New:
	// every -v5 and later that previews (all but generate-v5). Old: the
	// untagged, -v3 and -v4 histories of runs that preview.
	batchPreviewChange  = "batch-preview"
	batchPreviewVersion = workflow.Version(1)

	// approvalChange: a run awaiting approval takes ApproveUpdate (validated,
	// bound to the plan's digest), waits RunInput.ApprovalTimeout in phase
	// awaiting-approval, and previews again once approved (approve; reached
	// only by a run that waits for approval). New: approval-rejected-v4,
	// approval-stale-v4, approval-timeout-v4, v2-apply-approved-v4, -v7,
	// -v8, -v10, apply-refresh-v6, -v7, -v8, -v10, people-approved-v13,
	// people-cancelled-v13. Old (an hour for ApprovalSignal):
	// approval-signal-approved, approval-signal-rejected, v2-apply-approved,
	// -v3, -v5.
	//
	// Approvals bound to people (-v13) issue no new command, so they need no
	// change ID: the workspace's approval policy comes in CreateRelease's
	// result (zero, so no rules, in histories older than it), who answered
	// from the update's and signals' SubjectHeader (in the history too), and
	// the people and audit entries travel in the inputs of SetReleasePhase and
	// FinishRelease, which replay does not compare.
	approvalChange  = "approval-update"
	approvalVersion = workflow.Version(1)

	// waitChange: an applied node waits for health after its apply
	// (waitsForHealth, walkChanges). New: apply-wait, apply-queue and every
	// -v3 and later that walks. Old: apply-compensate, apply-create-and-fail,
	// apply-from-stack, apply-update-delete-ref, approval-signal-approved,
	// destroy, rollback, v2-apply-approved, v2-apply-cancel.
	waitChange  = "wait-healthy"
	waitVersion = workflow.Version(1)

	// localNodeChange: a node's Kubernetes step outside a batch is a local
	// activity when the run has no runtime queue (newNodeSteps; not reached
	// with a queue, so never by apply-queue*). New: every -v8 and later that
	// walks. Old: the walks of the untagged, -v3, -v4, -v5, -v6 and -v7
	// histories.
	localNodeChange  = "local-node-steps"
	localNodeVersion = workflow.Version(1)

	// localYieldChange: localStepBudget counts from when a yield's timer
	// fired, not from when it started; a server fires timers up to a second
	// late, and a long chain ran at one step a second (newNodeSteps, reached
	// after localNodeChange's new branch). New: every -v11 and -v12. Old:
	// every -v8, -v9 and -v10 that walks, but apply-queue-v10.
	localYieldChange  = "local-yield-resumed"
	localYieldVersion = workflow.Version(1)

	// batchChange: Kubernetes applies and deletes run in batches
	// (ApplyResources, DeleteResources) instead of an activity each
	// (walkChanges). New: every -v5 and later that walks. Old: the walks of
	// the untagged and -v3 histories, v2-apply-approved-v4, apply-queue.
	batchChange  = "batch-steps"
	batchVersion = workflow.Version(1)

	// chainChange: once the history is long (longHistory), a chain of the
	// graph runs as batch steps of up to maxBatch nodes instead of a step
	// per node, at least one event each, so a chain stopped at historyBudget
	// long before its end (chainFollows, within batchChange's new branch).
	// New: every -v10 and later that walks. Old: every -v5 to -v9 that
	// walks.
	chainChange  = "chain-steps"
	chainVersion = workflow.Version(2)
	// chainFromStart (version 2 of chainChange): a chain runs as batch
	// steps from its first node, whatever the history's length, once it has
	// chainMin nodes (minLocalChain while its steps are local and the
	// history short; shorter chains keep a local step per node). New:
	// apply-chain-v19-smallrows-chain, destroy-chain-v19-smallrows-chain.
	// Version 1 (only a long history): every -v10 to -v18 that walks.
	chainFromStart = workflow.Version(2)

	// waitBatchChange: the health waits after one batch step share one
	// WaitResources once the history is long, instead of a WaitResource each,
	// at least three events a resource, which stopped a spec of tens of
	// thousands of Deployments at historyBudget (waitsTogether; reached only
	// then, with two or more to wait for). New: long-waits-v12. Old: none
	// recorded (no run reached it before).
	waitBatchChange  = "wait-batches"
	waitBatchVersion = workflow.Version(1)

	// compensateChange: a failed apply is undone in batches
	// (CompensateResources) instead of a CompensateResource each, about four
	// events a resource, which left the undos of an apply past some 12,000
	// resources not done (compensate). New: apply-compensate-v9, -v10,
	// v2-apply-cancel-v9, -v10. Old: apply-compensate, -v3, -v5, -v7, -v8,
	// v2-apply-cancel, -v3, -v5, -v8.
	compensateChange  = "compensate-batches"
	compensateVersion = workflow.Version(1)

	// driftRemediateChange: DriftCheck sends its webhook events and, in
	// remediate mode, re-applies the checked release. New:
	// drift-remediate-v2, drift-warn-v2. Old: drift-warn.
	driftRemediateChange  = "drift-remediate"
	driftRemediateVersion = workflow.Version(1)

	// unchangedWaitChange: an unchanged resource that its preview found not
	// healthy (engine.Change.Wait) is waited for (WaitResource, or
	// WaitResources for several of one batch), so a release succeeds only
	// when what it records is healthy (walkChanges, reached only with such a
	// resource). New: apply-wait-unchanged-v13. Old: none (no run had such a
	// resource before).
	unchangedWaitChange  = "unchanged-waits"
	unchangedWaitVersion = workflow.Version(1)

	// eventsChange: Apply, Destroy, Rollback and Remediate announce their
	// events (awaiting-approval, succeeded, failed, cancelled) to the
	// workspace's and the operator's sinks: EventSinks once, then a
	// DeliverEvent per sink and event (initEvents, right after newRun). New:
	// apply-events-v14 (recorded by TestRecordDriftHistories: the apply its
	// checks check). Old: every other history of those runs.
	eventsChange  = "run-events"
	eventsVersion = workflow.Version(1)

	// driftSinksChange: DriftCheck announces its drift events to the
	// workspace's and the operator's sinks too, after its webhook's (DriftCheck,
	// after driftRemediateChange's new branch). New: drift-sinks-v14. Old:
	// drift-warn-v2, drift-remediate-v2.
	driftSinksChange  = "drift-sinks"
	driftSinksVersion = workflow.Version(1)

	// planPoliciesChange: after its preview, a plan with changes is checked
	// against the operator's and the workspace's plan policies
	// (CheckPolicies): a deny fails the run before anything is applied, a
	// require-approval raises what its approval needs (checkPolicies). New:
	// apply-policies-v15. Old: every history recorded before it that
	// previews changes.
	planPoliciesChange  = "plan-policies"
	planPoliciesVersion = workflow.Version(2)
	// planPoliciesWhenAny (version 2 of planPoliciesChange): an apply,
	// destroy or rollback checks only when its release says policies apply
	// (ReleaseInfo.Policies), sparing runs without any an activity; a preview,
	// which has no release, always checks. New: none recorded yet (the
	// branch schedules nothing a history could differ by when policies
	// apply). Old (version 1, always checks): apply-policies-v15.
	planPoliciesWhenAny = workflow.Version(2)

	// appliedEdgesChange: a node's dependencies that it needs only applied
	// (activities.PlanNode.Applied: the kind tiers inside one sync wave of a
	// manifest set) let it start once they are applied, while they wait for
	// their health (appliedDeps, reached only by a run whose plan has such a
	// dependency, in walkChanges). New: apply-waves-v16-hooks. Old: none
	// recorded (no plan had such a dependency before the change).
	appliedEdgesChange  = "applied-edges"
	appliedEdgesVersion = workflow.Version(1)

	// surgeryChange: Forget and Move runs (kumo release forget, kumo release
	// mv) approve their change list and write their records
	// (RecordSurgery) instead of planning and walking (recordSurgery,
	// reached only by those workflow types, which did not exist before).
	// New: forget-v16-surgery, move-v16-surgery. Old: none (no run took it
	// before the change).
	surgeryChange  = "state-surgery"
	surgeryVersion = workflow.Version(1)

	// hooksChange: a run whose spec (or prior release's spec) has hooks
	// (activities.PlanPage.Hooks) runs them: RunHooks before the walk
	// (pre), alongside it (sync), after it (post), and when the run failed
	// (fail) (newHookSteps, reached only by a run with hooks, in change).
	// New: apply-hooks-v17-hooks, apply-hooks-fail-v17-hooks. Old: none (no
	// run had hooks before the change: a spec with one was refused). The
	// Test workflow (kumo test) is new with it and needs no change ID:
	// test-v17-hooks replays it.
	hooksChange  = "hooks"
	hooksVersion = workflow.Version(1)

	// localReleaseChange: Apply, Destroy and Rollback run their release
	// steps (CreateRelease, the plan's first PlanPage, SetReleasePhase before
	// the walk, and FinishRelease of a plan of up to localFinishMax
	// resources) as local activities (newReleaseSteps, in mutate right before
	// CreateRelease). New: apply-batches-v18-fixedcost,
	// destroy-v18-fixedcost. Old: every history of those runs recorded before.
	localReleaseChange  = "local-release-steps"
	localReleaseVersion = workflow.Version(1)

	// localDriftChange: DriftCheck runs CheckDrift as a local activity when
	// the check has no runtime queue (checkDrift): the workflow's worker runs
	// it in its first workflow task, and the check ends in that task's
	// completion instead of after an activity's dispatch, start, completion
	// and a second workflow task. New: drift-sinks-v19-localdrift. Old:
	// every drift history recorded before (and every check with a runtime
	// queue, which never reaches the GetVersion).
	localDriftChange  = "local-drift-check"
	localDriftVersion = workflow.Version(1)

	// localPreviewChange: a run with no runtime queue and a plan of up to
	// localPreviewMax resources runs its preview batches (PreviewResources)
	// as local activities (localPreviews, at the start of preview). New:
	// apply-batches-v19-localpreview, destroy-v19-localpreview. Old: every
	// history recorded before that previews in batches.
	localPreviewChange  = "local-preview-batches"
	localPreviewVersion = workflow.Version(1)

	// localBatchChange: a batch step (ApplyResources, DeleteResources) of a
	// run whose other Kubernetes steps are local (nodeSteps.local) and whose
	// plan has up to localBatchMax resources is a local activity too
	// (nodeSteps.localBatches, at the walk's first batch that is not a
	// chain step). New: apply-batches-v20-localbatch,
	// apply-flat-v20-localbatch, destroy-flat-v20-localbatch. Old: every
	// history recorded before that walks in flat batches (apply-batches,
	// -v5 to -v19-localpreview, apply-wait-v10, long-waits-v12; a run with a
	// runtime queue never reaches the call).
	localBatchChange  = "local-batches"
	localBatchVersion = workflow.Version(1)

	// poolChange: a run whose batch steps are local (nodeSteps.localBatches)
	// takes the ready nodes of a class as one step holding every free slot,
	// its nodes going that many at once (nodeSteps.pools, batchWalk.pooled,
	// release.Manager.Pool), instead of a batch per slot. Taken in by
	// shapeChange's version 2 (shapedSince). New: apply-flat-v21-pool,
	// destroy-flat-v21-pool. Old: every history recorded before.
	poolChange  = "pool-steps"
	poolVersion = workflow.Version(1)

	// recordedReadsChange: when the previews (the plan's or the check that
	// it still holds) ended as local steps in the current workflow task,
	// SetReleasePhase, the first step that writes before the walk changes
	// anything, is an ordinary activity, so the task completes and history
	// records them first (run.phaseSteps). Taken in by shapeChange's version
	// 3 (shapedSince). New: v2-apply-approved-v22-reads (the phase after the
	// approved plan's second preview). Old: every history recorded before.
	recordedReadsChange  = "recorded-reads"
	recordedReadsVersion = workflow.Version(1)

	// waitSlotsChange: a node applied that goes on to wait for its health
	// gives its step's walk slot back (batchWalk.freeWaits, run.applied
	// opened for every run that waits), so the run's parallelism bounds the
	// steps that apply, not the waits after them (walkChanges). Taken in by
	// shapeChange's version 4 (shapedSince). New: apply-wait-slots-v23-slots.
	// Old: every history recorded before.
	waitSlotsChange  = "wait-slots"
	waitSlotsVersion = workflow.Version(1)

	// recordedPreviewChange: when the previews ended as local steps in the
	// workflow task that created the release, the phase before a walk that
	// changes something stays a local step and keeps them in the backend
	// first (SetPhaseInput.Preview); a next attempt of that task, its worker
	// lost, reads them back (run.preview, RecordedPreview) instead of
	// previewing again. Otherwise the phase is an ordinary activity, as
	// recordedReadsChange made it (run.phaseSteps). Taken in by
	// shapeChange's version 5 (shapedSince). New: kept-apply, kept-destroy
	// (their one workflow task keeps its previews). Old: every history
	// recorded before.
	recordedPreviewChange  = "recorded-previews"
	recordedPreviewVersion = workflow.Version(1)

	// sinksAheadChange: a run with no runtime queue asks for its event sinks
	// (EventSinks, a local step) when it decides it announces events, beside
	// its first steps, instead of at its first event, most often its end
	// (initEvents). Taken in by shapeChange's version 5 (shapedSince). New:
	// kept-apply, kept-destroy. Old: every history recorded before.
	sinksAheadChange  = "sinks-ahead"
	sinksAheadVersion = workflow.Version(1)

	// shapeChange: a run takes every change before it (shaped) at the version
	// it had then, without recording a marker of its own (changeVersion). The
	// SDK records each GetVersion as a marker and an upsert of the
	// TemporalChangeVersion search attribute listing every version so far:
	// an apply recorded 14 to 16 of each, a third of its history's events and
	// a visibility write each, for decisions that are the same in every run
	// started since. A run records this one marker instead, at its first
	// change; a run recorded before it (no marker) goes on taking each
	// change's own. New: every -v20-shape history. Old: every history
	// recorded before. Each later version takes more changes in
	// (shapedSince): a run recorded with an earlier version takes those as a
	// run before shapeChange does.
	shapeChange  = "kumo-shape"
	shapeVersion = workflow.Version(5)
)

// shaped are the changes shapeChange takes, at the version each had then.
// They are fixed: a run recorded with shapeChange's marker replays them so
// for as long as it is kept. A later change of the same code therefore gets
// a new change ID (not version 2 of the old one), recording its own marker,
// until a new version of shapeChange takes it in too;
// TestShapedVersionsAreFixed fails when a shaped change's constant moves.
var shaped = map[string]workflow.Version{
	statusChange:         1,
	runtimeQueueChange:   1,
	planPagesChange:      1,
	previewRefreshChange: 1,
	batchPreviewChange:   1,
	approvalChange:       1,
	waitChange:           1,
	localNodeChange:      1,
	localYieldChange:     1,
	batchChange:          1,
	chainChange:          2,
	waitBatchChange:      1,
	compensateChange:     1,
	driftRemediateChange: 1,
	unchangedWaitChange:  1,
	eventsChange:         1,
	driftSinksChange:     1,
	planPoliciesChange:   2,
	appliedEdgesChange:   1,
	surgeryChange:        1,
	hooksChange:          1,
	localReleaseChange:   1,
	localDriftChange:     1,
	localPreviewChange:   1,
	localBatchChange:     1,
}

// shapedSince are the changes each later version of shapeChange takes in,
// at the version each had then: fixed, as shaped's are.
var shapedSince = map[workflow.Version]map[string]workflow.Version{
	2: {poolChange: 1},
	3: {recordedReadsChange: 1},
	4: {waitSlotsChange: 1},
	5: {recordedPreviewChange: 1, sinksAheadChange: 1},
}

// changeVersion is the version of change, whose newest is newest, that the
// run takes: its shaped version when the run is of a shapeChange version
// that takes it, else what workflow.GetVersion gives, recording its marker
// the first time.
func changeVersion(ctx workflow.Context, change string, newest workflow.Version) workflow.Version {
	if v, ok := shaped[change]; ok && workflow.GetVersion(ctx, shapeChange, workflow.DefaultVersion, shapeVersion) >= 1 {
		return v
	}
	for since, changes := range shapedSince { // a change is in one at most: the order does not matter
		if v, ok := changes[change]; ok && workflow.GetVersion(ctx, shapeChange, workflow.DefaultVersion, shapeVersion) >= since {
			return v
		}
	}
	return workflow.GetVersion(ctx, change, workflow.DefaultVersion, newest)
}
