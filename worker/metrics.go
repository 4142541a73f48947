package worker

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine/resid"
	"github.com/kumoproj/kumo/runspec"
)

// kumo's own metrics, recorded through the Temporal SDK's metrics handler (so
// `kumo worker --metrics-address` exports them next to the SDK's, and a worker
// without one records nothing). Workflow-side metrics use the workflow's
// handler, which records nothing while a worker replays a run another worker
// began: a run is counted once across a fleet.
const (
	// MetricRunsStarted counts runs by operation (apply, destroy, ...).
	MetricRunsStarted = "kumo_runs_started"
	// MetricRunsFinished counts ended runs by operation and outcome
	// (succeeded, failed, cancelled).
	MetricRunsFinished = "kumo_runs_finished"
	// MetricRunDuration is how long runs took, by operation and outcome.
	MetricRunDuration = "kumo_run_duration"
	// MetricNodeSteps counts node steps by step (preview, refresh, apply,
	// delete, wait, compensate), runtime (Kubernetes, Terraform) and result (ok, error).
	MetricNodeSteps = "kumo_node_steps"
	// MetricNodeStepDuration is the latency of node steps, with the same tags.
	MetricNodeStepDuration = "kumo_node_step_duration"
	// MetricDriftChecks counts drift checks by outcome (in-sync, drifted, failed).
	MetricDriftChecks = "kumo_drift_checks"
	// MetricDriftedResources counts the resources drift checks found not in sync.
	MetricDriftedResources = "kumo_drifted_resources"
)

var operations = map[string]string{
	runspec.GenerateWorkflow: "generate", runspec.PreviewWorkflow: "preview", runspec.ApplyWorkflow: "apply",
	runspec.DestroyWorkflow: "destroy", runspec.RollbackWorkflow: "rollback", runspec.RefreshWorkflow: "refresh", runspec.DriftWorkflow: "drift",
	runspec.ForgetWorkflow: "forget", runspec.MoveWorkflow: "move",
}

var nodeSteps = map[string]string{
	activities.PreviewResourceActivity: "preview", activities.PreviewNodeActivity: "preview", activities.ApplyResourceActivity: "apply",
	activities.DeleteResourceActivity: "delete", activities.WaitResourceActivity: "wait",
	activities.CompensateResourceActivity: "compensate",
	// A batch step counts each of its resources as a step; its duration is
	// the batch's.
	activities.PreviewResourcesActivity: "preview", activities.ApplyResourcesActivity: "apply",
	activities.DeleteResourcesActivity: "delete", activities.RefreshResourcesActivity: "refresh",
	activities.CompensateResourcesActivity: "compensate", activities.WaitResourcesActivity: "wait",
}

// metrics is the worker interceptor that records kumo's metrics.
type metrics struct {
	interceptor.WorkerInterceptorBase
}

func (*metrics) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &activityMetrics{interceptor.ActivityInboundInterceptorBase{Next: next}}
}

func (*metrics) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &workflowMetrics{interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

type activityMetrics struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *activityMetrics) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (interface{}, error) {
	step, ok := nodeSteps[activity.GetInfo(ctx).ActivityType.Name]
	if !ok {
		return a.Next.ExecuteActivity(ctx, in)
	}
	start := time.Now()
	res, err := a.Next.ExecuteActivity(ctx, in)
	result := "ok"
	if err != nil {
		result = "error"
	}
	h := activity.GetMetricsHandler(ctx).WithTags(map[string]string{"step": step, "runtime": runtimeOf(in.Args), "result": result})
	h.Counter(MetricNodeSteps).Inc(int64(resourcesOf(in.Args)))
	h.Timer(MetricNodeStepDuration).Record(time.Since(start))
	return res, err
}

// runtimeOf names the runtime of a node step's resource from its ID, as
// resid.Parse tells it (a Kubernetes ID's second part is a capitalised kind, a
// Terraform ID's a lower-case provider name); "unknown" for a malformed ID.
func runtimeOf(args []interface{}) string {
	var id string
	switch in := first(args).(type) {
	case activities.NodeInput:
		id = in.ID
	case activities.CompensateInput:
		id = in.ID
	case activities.BatchInput:
		if len(in.IDs) > 0 {
			id = in.IDs[0] // a batch holds resources of one runtime
		}
	case activities.CompensateBatchInput:
		if len(in.IDs) > 0 {
			id = in.IDs[0]
		}
	}
	parsed, err := resid.Parse(id, "")
	if err != nil {
		return "unknown"
	}
	return parsed.Type
}

// resourcesOf is the number of resources a node step works on: a batch's, or one.
func resourcesOf(args []interface{}) int {
	switch b := first(args).(type) {
	case activities.BatchInput:
		return max(len(b.IDs), 1)
	case activities.CompensateBatchInput:
		return max(len(b.IDs), 1)
	}
	return 1
}

func first(args []interface{}) interface{} {
	if len(args) == 0 {
		return nil
	}
	return args[0]
}

type workflowMetrics struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (w *workflowMetrics) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (interface{}, error) {
	info := workflow.GetInfo(ctx)
	op, ok := operations[info.WorkflowType.Name]
	if !ok {
		return w.Next.ExecuteWorkflow(ctx, in)
	}
	h := workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"operation": op})
	h.Counter(MetricRunsStarted).Inc(1)
	res, err := w.Next.ExecuteWorkflow(ctx, in)
	outcome := outcomeOf(res, err)
	done := h.WithTags(map[string]string{"outcome": outcome})
	done.Counter(MetricRunsFinished).Inc(1)
	done.Timer(MetricRunDuration).Record(workflow.Now(ctx).Sub(info.WorkflowStartTime))
	if d, ok := res.(runspec.DriftResult); ok && op == "drift" {
		check := "in-sync"
		switch {
		case err != nil:
			check = "failed"
		case d.Counts.Resources > d.Counts.InSync:
			check = "drifted"
		}
		dh := workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"outcome": check})
		dh.Counter(MetricDriftChecks).Inc(1)
		dh.Counter(MetricDriftedResources).Inc(int64(d.Counts.Resources - d.Counts.InSync))
	}
	return res, err
}

// outcomeOf is how a run ended: its result's status, else from its error.
func outcomeOf(res interface{}, err error) string {
	if r, ok := res.(runspec.Result); ok && r.Status != "" {
		return string(r.Status)
	}
	var cancelled *temporal.CanceledError
	switch {
	case errors.As(err, &cancelled):
		return string(runspec.StatusCancelled)
	case err != nil:
		return string(runspec.StatusFailed)
	}
	return string(runspec.StatusSucceeded)
}
