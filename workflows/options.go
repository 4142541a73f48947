package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/engine"
)

// Timeouts decide how fast a run resumes after a crash: a dead worker's activity is
// retried once its timeout passes. Node calls are one server-side apply or read, so
// StartToClose stays tight; deletes wait for the object to go and heartbeat instead.
//
// Terraform calls wait on providers and clouds (a database takes many minutes to
// create or delete), so they get a long StartToClose and, for applies and
// deletes, the heartbeat instead; a Terraform preview (refresh and plan) gets
// longer than a server-side dry run.
const (
	shortCallTimeout     = 10 * time.Second
	deleteCallTimeout    = 10 * time.Minute
	deleteHeartbeat      = 10 * time.Second
	terraformCallTimeout = 2 * time.Hour
	terraformPreview     = 5 * time.Minute
	defaultParallel      = 10
)

// DefaultParallelism is how many steps a run keeps in flight when its input
// names no parallelism: workers keep as many activity polls open.
const DefaultParallelism = defaultParallel

var retryPolicy = &temporal.RetryPolicy{
	InitialInterval:    200 * time.Millisecond,
	BackoffCoefficient: 2,
	MaximumInterval:    10 * time.Second,
	MaximumAttempts:    6,
}

// step returns ctx set up for one short activity, summarised for the Web UI.
func step(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, shortOptions(summary))
}

func shortOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: shortCallTimeout,
		RetryPolicy:         retryPolicy,
		Summary:             summary,
		// A cancelled run still waits for its in-flight nodes, so their results
		// are recorded before the release is finished.
		WaitForCancellation: true,
	}
}

// A workspace may name a task queue (temporal.taskQueue) served by workers
// inside its cluster's network: its runs' runtime steps (everything that
// touches Kubernetes or runs Terraform: previews, applies, deletes, waits,
// compensations, drift and status reads) go there, while orchestration and
// the release lifecycle stay on TaskQueue. The step helpers below are the one place that
// choice is made, from the queue withRuntimeQueue put in the run's context
// under runtimeQueueKey.
type runtimeQueueKey struct{}

// withRuntimeQueue returns ctx carrying queue as the run's runtime queue ("":
// TaskQueue). Runs recorded before workspaces had queues replay without one.
func withRuntimeQueue(ctx workflow.Context, queue string) workflow.Context {
	if queue == "" || changeVersion(ctx, runtimeQueueChange, runtimeQueueVersion) == workflow.DefaultVersion {
		return ctx
	}
	return workflow.WithValue(ctx, runtimeQueueKey{}, queue)
}

// runtimeQueue is the run's runtime queue, "" when its runtime steps run on TaskQueue.
func runtimeQueue(ctx workflow.Context) string {
	q, _ := ctx.Value(runtimeQueueKey{}).(string)
	return q
}

// runtimeStep is ctx set up with o for a runtime step, on the run's runtime queue.
func runtimeStep(ctx workflow.Context, o workflow.ActivityOptions) workflow.Context {
	o.TaskQueue = runtimeQueue(ctx)
	return workflow.WithActivityOptions(ctx, o)
}

// finishOptions are FinishRelease's, which must not give up: it is the only way
// out of a non-final phase. It reads every state entry and rewrites the release,
// so it gets more time than one node, and it retries until the backend answers.
// It heartbeats: a worker killed while finishing is retried within seconds,
// not after the whole StartToClose (the crash suite stalled 5 minutes there).
// As a local step (releaseSteps) it is the workflow task that times out
// instead, after the same 10 s, and the next worker finishes.
func finishOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    deleteHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
		Summary:             "finish release",
	}
}

// applyStep is the step that applies (or undoes) one resource of type typ.
func applyStep(ctx workflow.Context, typ engine.Type, summary string) workflow.Context {
	if typ == engine.Terraform {
		return heartbeatStep(ctx, terraformCallTimeout, summary)
	}
	return runtimeStep(ctx, shortOptions(summary))
}

// deleteStep is the step that deletes one resource of type typ.
func deleteStep(ctx workflow.Context, typ engine.Type, summary string) workflow.Context {
	if typ == engine.Terraform {
		return heartbeatStep(ctx, terraformCallTimeout, summary)
	}
	return longStep(ctx, summary)
}

// longStep is step for activities that wait (deletes), kept alive by heartbeats.
func longStep(ctx workflow.Context, summary string) workflow.Context {
	return heartbeatStep(ctx, deleteCallTimeout, summary)
}

// heartbeatStep is a runtime step of up to timeout, kept alive by heartbeats: a
// crashed worker's call is retried once deleteHeartbeat passes without one.
func heartbeatStep(ctx workflow.Context, timeout time.Duration, summary string) workflow.Context {
	return runtimeStep(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    deleteHeartbeat,
		RetryPolicy:         retryPolicy,
		Summary:             summary,
		WaitForCancellation: true,
	})
}

// executeRead runs a short read-only call (a preview) of a resource of type typ.
// It is a local activity: it runs in the worker that runs the workflow, without
// a round trip through the task queue, and is recorded as one marker instead of
// three events. That is ~1 ms instead of ~5 ms per node, and a quarter of the
// history. A run with a runtime queue reads through that queue's workers
// instead (an ordinary activity): the workflow's worker may not reach the
// cluster at all.
func executeRead(ctx workflow.Context, typ engine.Type, summary string, activity, in any) workflow.Future {
	timeout := shortCallTimeout
	if typ == engine.Terraform {
		timeout = terraformPreview
	}
	if runtimeQueue(ctx) != "" {
		return workflow.ExecuteActivity(runtimeStep(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: timeout, RetryPolicy: retryPolicy, Summary: summary,
		}), activity, in)
	}
	return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: timeout,
		RetryPolicy:         retryPolicy,
		Summary:             summary,
	}), activity, in)
}
