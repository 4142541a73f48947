package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// localFinishMax is the largest plan whose FinishRelease is a local step
// (localReleaseChange). Finishing reads every state entry and rewrites the
// release: tens of milliseconds for a few hundred resources, seconds for tens
// of thousands. A long local step holds the workflow task, so queries and
// signals wait for the SDK's task heartbeat (~8 s); a large release's finish
// stays an ordinary, heartbeating activity, where those few round trips do not
// matter anyway.
var localFinishMax = 2000

// releaseSteps says how a run's release lifecycle steps run: CreateRelease,
// the plan's first page (planGraph), SetReleasePhase before the walk and
// FinishRelease.
//
// Since localReleaseChange they are local activities: the workflow's worker
// runs each in its workflow task, one marker in history instead of three
// events, and the next step follows in the same task instead of after a
// round trip through the server (the task queue dispatch, then a new workflow
// task). These steps run where the workflow runs in any case: they touch only
// the backend, never a cluster, so a workspace's runtime queue does not take
// them. Each is idempotent and keyed by the run (CreateRelease returns the
// revision this run already created; the phase and the finish are written
// again unchanged), so a worker killed during one is no different from a
// killed ordinary step: the workflow task times out and the next worker runs
// the steps since the last completed task again. A bench apply of 200
// ConfigMaps made four such round trips (docs/performance.md). The phase
// after previews that were local steps of the same task is special: it keeps
// them, or goes through the server, before the walk changes anything
// (phaseSteps).
type releaseSteps struct{ local bool }

// newReleaseSteps decides, once per run and before its first release step,
// how the steps run. A run recorded before the change replays its ordinary
// activities.
func newReleaseSteps(ctx workflow.Context) releaseSteps {
	return releaseSteps{local: changeVersion(ctx, localReleaseChange, localReleaseVersion) >= localReleaseVersion}
}

// start runs activity with in under o: a local activity of o's timeout,
// retries and summary when s is local, else an ordinary activity.
func (s releaseSteps) start(ctx workflow.Context, o workflow.ActivityOptions, activity, in any) workflow.Future {
	if !s.local {
		return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, o), activity, in)
	}
	return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: o.StartToCloseTimeout,
		RetryPolicy:         o.RetryPolicy,
		Summary:             o.Summary,
	}), activity, in)
}

// finish is s for FinishRelease of a plan of nodes resources: local only up
// to localFinishMax.
func (s releaseSteps) finish(nodes int) releaseSteps {
	return releaseSteps{local: s.local && nodes <= localFinishMax}
}

// phaseSteps is how SetReleasePhase runs before the walk of changes: the
// run's release steps, but an ordinary activity when the walk will change
// something and a preview ended with local reads in the current workflow
// task (recordedReadsChange). A local step's result is recorded only when
// its workflow task completes. Were the worker to die during the walk's
// local steps in that same task, the next worker would run the task again
// from its start, previews included, and they would see what this run had
// applied meanwhile: an applied resource unchanged, so neither applied again
// nor undone should the apply fail, and a reference to it resolved against
// its new value. An ordinary step is taken only once the task completes, so
// the previews are history before anything is written.
//
// Since recordedPreviewChange, when that task is also the one that created
// the release, the phase stays local and keeps the previews in the backend
// first (keep): an attempt of the task after a lost one creates the same
// release again, is told the previews are kept, and goes on from them
// (readKeptPreview). A task that began after the release's (an approval
// waited, the SDK's task heartbeat came) cannot tell a next attempt that
// way, and takes the round trip.
func (r *run) phaseSteps(ctx workflow.Context, changes []engine.Change) (steps releaseSteps, keep bool) {
	now := workflow.GetInfo(ctx).GetCurrentHistoryLength()
	if !r.release.local || r.readsIn == 0 || r.readsIn != now || !anyChange(changes) {
		return r.release, false
	}
	if changeVersion(ctx, recordedReadsChange, recordedReadsVersion) < recordedReadsVersion {
		return r.release, false
	}
	if r.releaseIn == now && changeVersion(ctx, recordedPreviewChange, recordedPreviewVersion) >= recordedPreviewVersion {
		return r.release, true
	}
	return releaseSteps{}, false
}

// readKeptPreview reads back the previews an earlier attempt of this
// workflow task kept (phaseSteps): the plan's changes and which nodes are
// stale. Previews that do not fit the plan fail the run.
func (r *run) readKeptPreview(ctx workflow.Context, key backend.ReleaseKey) ([]engine.Change, []bool, error) {
	var p backend.RecordedPreview
	if err := r.release.start(ctx, shortOptions("kept previews"), acts.RecordedPreview, activities.RecordedPreviewInput{Key: key}).Get(ctx, &p); err != nil {
		return nil, nil, err
	}
	if len(p.Changes) != len(r.plan.Nodes) {
		return nil, nil, fmt.Errorf("revision %d: the kept previews hold %d resources, the plan %d", key.Revision, len(p.Changes), len(r.plan.Nodes))
	}
	for i, c := range p.Changes {
		if c.ID != r.plan.Nodes[i].ID {
			return nil, nil, fmt.Errorf("revision %d: the kept previews hold %s where the plan has %s", key.Revision, c.ID, r.plan.Nodes[i].ID)
		}
	}
	stale := make([]bool, len(p.Changes))
	for _, i := range p.Stale {
		if i < 0 || i >= len(stale) {
			return nil, nil, fmt.Errorf("revision %d: the kept previews mark node %d stale, of %d", key.Revision, i, len(stale))
		}
		stale[i] = true
	}
	return p.Changes, stale, nil
}

// localPreviewMax (a variable for tests) is the largest plan whose preview batches are local
// activities (localPreviews): their results, a few hundred bytes a
// resource, come back in the workflow task's completion, which the server
// bounds at a few megabytes.
var localPreviewMax = 2000

// localPreviews reports whether the run's preview batches run as local
// activities of the workflow's worker, since localPreviewChange: with no
// runtime queue (the workflow's own workers run its runtime steps, so they
// may read the cluster) and a plan of up to localPreviewMax resources. The
// batches then run side by side inside the run's first workflow task, with
// its release steps, instead of each going through the task queue and
// coming back in a workflow task of its own: a small run's preview was ten
// such round trips. A batch of a run with a runtime queue, or of a larger
// plan, stays an ordinary activity, spread over the queue's workers.
func (r *run) localPreviews(ctx workflow.Context) bool {
	if runtimeQueue(ctx) != "" || len(r.plan.Nodes) > localPreviewMax {
		return false
	}
	return changeVersion(ctx, localPreviewChange, localPreviewVersion) >= localPreviewVersion
}
