package workflows

import (
	"go.temporal.io/sdk/workflow"
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
// ConfigMaps made four such round trips (docs/performance.md).
type releaseSteps struct{ local bool }

// newReleaseSteps decides, once per run and before its first release step,
// how the steps run. A run recorded before the change replays its ordinary
// activities.
func newReleaseSteps(ctx workflow.Context) releaseSteps {
	return releaseSteps{local: workflow.GetVersion(ctx, localReleaseChange, workflow.DefaultVersion, localReleaseVersion) >= localReleaseVersion}
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
