package auth

import (
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/api/adminservice/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kumoproj/kumo/authz"
)

// rule authorizes one call of a method, and may rewrite its request.
type rule func(c *call) error

const (
	wfs = "/temporal.api.workflowservice.v1.WorkflowService/"
	ops = "/temporal.api.operatorservice.v1.OperatorService/"
)

// anyone: any authenticated subject (what a client needs to connect).
func anyone(*call) error { return nil }

// worker: only a worker principal (on */*: a poll names no project).
func worker(c *call) error {
	c.workerCall = true
	return c.decide(authz.Work, "", "", c.method, false)
}

// adminRead and adminWrite: only an admin of */*.
func adminRead(c *call) error  { return c.decide(authz.AdminAction, "", "", c.method, false) }
func adminWrite(c *call) error { return c.decide(authz.AdminAction, "", "", c.method, true) }

// viewAll: only a viewer of */* (APIs whose filters cannot be narrowed).
func viewAll(c *call) error { return c.decide(authz.List, "", "", c.method, false) }

// describeQueue: a worker, or anyone who views some project or workspace
// asking about one of kumo's task queues. The Web UI's run page describes
// the run's queue (which workers poll it) and sends a user it is refused to
// its login page; the queue is shared by every project, so no narrower grant
// can be asked for, and the answer names workers and counts tasks, never a
// run's content.
func describeQueue(c *call) error {
	r, ok := c.req.(*workflowservice.DescribeTaskQueueRequest)
	if !ok {
		return status.Errorf(codes.Internal, "%s: unexpected request %T", c.method, c.req)
	}
	if c.i.policy.Decide(c.p.subject, authz.Work, "", "") == nil {
		return worker(c)
	}
	if scopes, all := c.i.policy.ViewScopes(c.p.subject); !all && len(scopes) == 0 {
		return c.decide(authz.List, "", "", r.GetTaskQueue().GetName(), false)
	}
	if q := r.GetTaskQueue().GetName(); !c.i.taskQueues[q] {
		return c.deny(authz.List, "", "", q, "task queue %q is not kumo's", q)
	}
	return nil
}

// onRun decides action on the run the request names through id.
func onRun[T any](action authz.Action, write bool, id func(T) string) rule {
	return func(c *call) error {
		r, ok := c.req.(T)
		if !ok {
			return status.Errorf(codes.Internal, "%s: unexpected request %T", c.method, c.req)
		}
		_, _, err := c.byWorkflowID(action, id(r), write)
		return err
	}
}

// typed adapts a rule on a request type.
func typed[T any](f func(c *call, r T) error) rule {
	return func(c *call) error {
		r, ok := c.req.(T)
		if !ok {
			return status.Errorf(codes.Internal, "%s: unexpected request %T", c.method, c.req)
		}
		return f(c, r)
	}
}

// methods is every method the frontend serves and its rule. A method not
// here is refused: a Temporal upgrade that adds one adds it refused.
var methods = map[string]rule{}

func init() {
	w := map[string]rule{
		// Connecting and namespaces.
		"GetSystemInfo":       anyone,
		"GetClusterInfo":      anyone,
		"DescribeNamespace":   anyone,
		"ListNamespaces":      anyone,
		"GetSearchAttributes": anyone,
		"RegisterNamespace":   adminWrite,
		"UpdateNamespace":     adminWrite,
		"DeprecateNamespace":  adminWrite,

		// Starting runs.
		"StartWorkflowExecution":           typed(startWorkflow),
		"SignalWithStartWorkflowExecution": typed(signalWithStart),
		"ExecuteMultiOperation":            typed(multiOperation),

		// Reading runs.
		"GetWorkflowExecutionHistory": onRun(authz.Show, false, func(r *workflowservice.GetWorkflowExecutionHistoryRequest) string {
			return r.GetExecution().GetWorkflowId()
		}),
		"GetWorkflowExecutionHistoryReverse": onRun(authz.Show, false, func(r *workflowservice.GetWorkflowExecutionHistoryReverseRequest) string {
			return r.GetExecution().GetWorkflowId()
		}),
		"DescribeWorkflowExecution": onRun(authz.Show, false, func(r *workflowservice.DescribeWorkflowExecutionRequest) string {
			return r.GetExecution().GetWorkflowId()
		}),
		"QueryWorkflow": onRun(authz.Show, false, func(r *workflowservice.QueryWorkflowRequest) string {
			return r.GetExecution().GetWorkflowId()
		}),
		"PollWorkflowExecutionUpdate": onRun(authz.Show, false, func(r *workflowservice.PollWorkflowExecutionUpdateRequest) string {
			return r.GetUpdateRef().GetWorkflowExecution().GetWorkflowId()
		}),

		// Lists: narrowed to what the subject views.
		"ListWorkflowExecutions": typed(func(c *call, r *workflowservice.ListWorkflowExecutionsRequest) error {
			return c.scoped(r.GetQuery(), func(q string) { r.Query = q })
		}),
		"ScanWorkflowExecutions": typed(func(c *call, r *workflowservice.ScanWorkflowExecutionsRequest) error {
			return c.scoped(r.GetQuery(), func(q string) { r.Query = q })
		}),
		"CountWorkflowExecutions": typed(func(c *call, r *workflowservice.CountWorkflowExecutionsRequest) error {
			return c.scoped(r.GetQuery(), func(q string) { r.Query = q })
		}),
		"ListOpenWorkflowExecutions":     viewAll,
		"ListClosedWorkflowExecutions":   viewAll,
		"ListArchivedWorkflowExecutions": viewAll,

		// Acting on runs.
		"SignalWorkflowExecution": typed(signal),
		"UpdateWorkflowExecution": typed(update),
		"RequestCancelWorkflowExecution": onRun(authz.Cancel, true, func(r *workflowservice.RequestCancelWorkflowExecutionRequest) string {
			return r.GetWorkflowExecution().GetWorkflowId()
		}),
		"TerminateWorkflowExecution": onRun(authz.Terminate, true, func(r *workflowservice.TerminateWorkflowExecutionRequest) string {
			return r.GetWorkflowExecution().GetWorkflowId()
		}),
		"ResetWorkflowExecution": onRun(authz.Terminate, true, func(r *workflowservice.ResetWorkflowExecutionRequest) string {
			return r.GetWorkflowExecution().GetWorkflowId()
		}),
		"DeleteWorkflowExecution": onRun(authz.Terminate, true, func(r *workflowservice.DeleteWorkflowExecutionRequest) string {
			return r.GetWorkflowExecution().GetWorkflowId()
		}),
		"PauseWorkflowExecution": onRun(authz.Terminate, true, func(r *workflowservice.PauseWorkflowExecutionRequest) string {
			return r.GetWorkflowId()
		}),
		"UnpauseWorkflowExecution": onRun(authz.Terminate, true, func(r *workflowservice.UnpauseWorkflowExecutionRequest) string {
			return r.GetWorkflowId()
		}),
		"UpdateWorkflowExecutionOptions": onRun(authz.Terminate, true, func(r *workflowservice.UpdateWorkflowExecutionOptionsRequest) string {
			return r.GetWorkflowExecution().GetWorkflowId()
		}),
		"UpdateActivityOptions": onRun(authz.Terminate, true, func(r *workflowservice.UpdateActivityOptionsRequest) string {
			return r.GetExecution().GetWorkflowId()
		}),
		"PauseActivity": onRun(authz.Terminate, true, func(r *workflowservice.PauseActivityRequest) string {
			return r.GetExecution().GetWorkflowId()
		}),
		"UnpauseActivity": onRun(authz.Terminate, true, func(r *workflowservice.UnpauseActivityRequest) string {
			return r.GetExecution().GetWorkflowId()
		}),
		"ResetActivity": onRun(authz.Terminate, true, func(r *workflowservice.ResetActivityRequest) string {
			return r.GetExecution().GetWorkflowId()
		}),

		// Workers.
		"PollWorkflowTaskQueue":            worker,
		"RespondWorkflowTaskCompleted":     worker,
		"RespondWorkflowTaskFailed":        worker,
		"PollActivityTaskQueue":            worker,
		"RecordActivityTaskHeartbeat":      worker,
		"RecordActivityTaskHeartbeatById":  worker,
		"RespondActivityTaskCompleted":     worker,
		"RespondActivityTaskCompletedById": worker,
		"RespondActivityTaskFailed":        worker,
		"RespondActivityTaskFailedById":    worker,
		"RespondActivityTaskCanceled":      worker,
		"RespondActivityTaskCanceledById":  worker,
		"RespondQueryTaskCompleted":        worker,
		"ResetStickyTaskQueue":             worker,
		"ShutdownWorker":                   worker,
		"DescribeTaskQueue":                describeQueue,
		"ListTaskQueuePartitions":          worker,
		"PollNexusTaskQueue":               worker,
		"RespondNexusTaskCompleted":        worker,
		"RespondNexusTaskFailed":           worker,
		"RecordWorkerHeartbeat":            worker,
		"FetchWorkerConfig":                worker,
		"ListWorkers":                      worker,
		"CountWorkers":                     worker,
		"DescribeWorker":                   worker,
		"GetWorkerBuildIdCompatibility":    worker,
		"GetWorkerVersioningRules":         worker,
		"GetWorkerTaskReachability":        worker,

		// Schedules.
		"CreateSchedule": typed(func(c *call, r *workflowservice.CreateScheduleRequest) error {
			return c.scheduleWrite(r.GetScheduleId(), r.GetSchedule())
		}),
		"UpdateSchedule": typed(func(c *call, r *workflowservice.UpdateScheduleRequest) error {
			return c.scheduleWrite(r.GetScheduleId(), r.GetSchedule())
		}),
		"PatchSchedule": typed(func(c *call, r *workflowservice.PatchScheduleRequest) error {
			return c.scheduleWrite(r.GetScheduleId(), nil)
		}),
		"DeleteSchedule": typed(func(c *call, r *workflowservice.DeleteScheduleRequest) error {
			return c.scheduleWrite(r.GetScheduleId(), nil)
		}),
		"DescribeSchedule": typed(func(c *call, r *workflowservice.DescribeScheduleRequest) error {
			return c.scheduleRead(r.GetScheduleId())
		}),
		"ListScheduleMatchingTimes": typed(func(c *call, r *workflowservice.ListScheduleMatchingTimesRequest) error {
			return c.scheduleRead(r.GetScheduleId())
		}),
		"ListSchedules": typed(func(c *call, r *workflowservice.ListSchedulesRequest) error {
			return c.scoped(r.GetQuery(), func(q string) { r.Query = q })
		}),
		"CountSchedules": typed(func(c *call, r *workflowservice.CountSchedulesRequest) error {
			return c.scoped(r.GetQuery(), func(q string) { r.Query = q })
		}),

		// Batches, rules, versioning, deployments, task queue configuration,
		// standalone activities and Nexus operations: kumo uses none of
		// them; an admin of */* may.
		"StartBatchOperation":                          adminWrite,
		"StopBatchOperation":                           adminWrite,
		"DescribeBatchOperation":                       adminRead,
		"ListBatchOperations":                          adminRead,
		"CreateWorkflowRule":                           adminWrite,
		"DeleteWorkflowRule":                           adminWrite,
		"TriggerWorkflowRule":                          adminWrite,
		"DescribeWorkflowRule":                         adminRead,
		"ListWorkflowRules":                            adminRead,
		"UpdateWorkerBuildIdCompatibility":             adminWrite,
		"UpdateWorkerVersioningRules":                  adminWrite,
		"UpdateTaskQueueConfig":                        adminWrite,
		"UpdateWorkerConfig":                           adminWrite,
		"DescribeDeployment":                           adminRead,
		"DescribeWorkerDeploymentVersion":              adminRead,
		"ListDeployments":                              adminRead,
		"GetDeploymentReachability":                    adminRead,
		"GetCurrentDeployment":                         adminRead,
		"DescribeWorkerDeployment":                     adminRead,
		"ListWorkerDeployments":                        adminRead,
		"SetCurrentDeployment":                         adminWrite,
		"SetWorkerDeploymentCurrentVersion":            adminWrite,
		"DeleteWorkerDeployment":                       adminWrite,
		"DeleteWorkerDeploymentVersion":                adminWrite,
		"SetWorkerDeploymentRampingVersion":            adminWrite,
		"CreateWorkerDeployment":                       adminWrite,
		"CreateWorkerDeploymentVersion":                adminWrite,
		"UpdateWorkerDeploymentVersionComputeConfig":   adminWrite,
		"ValidateWorkerDeploymentVersionComputeConfig": adminRead,
		"UpdateWorkerDeploymentVersionMetadata":        adminWrite,
		"SetWorkerDeploymentManager":                   adminWrite,
		"StartActivityExecution":                       adminWrite,
		"StartNexusOperationExecution":                 adminWrite,
		"DescribeActivityExecution":                    adminRead,
		"DescribeNexusOperationExecution":              adminRead,
		"PollActivityExecution":                        adminRead,
		"PollNexusOperationExecution":                  adminRead,
		"ListActivityExecutions":                       adminRead,
		"ListNexusOperationExecutions":                 adminRead,
		"CountActivityExecutions":                      adminRead,
		"CountNexusOperationExecutions":                adminRead,
		"RequestCancelActivityExecution":               adminWrite,
		"RequestCancelNexusOperationExecution":         adminWrite,
		"TerminateActivityExecution":                   adminWrite,
		"DeleteActivityExecution":                      adminWrite,
		"PauseActivityExecution":                       adminWrite,
		"ResetActivityExecution":                       adminWrite,
		"UnpauseActivityExecution":                     adminWrite,
		"UpdateActivityExecutionOptions":               adminWrite,
		"TerminateNexusOperationExecution":             adminWrite,
		"DeleteNexusOperationExecution":                adminWrite,
		"PollWorkflowExecutionTimeSkipping":            adminRead,
	}
	for m, r := range w {
		methods[wfs+m] = r
	}
	o := map[string]rule{
		"ListSearchAttributes":     anyone,
		"AddSearchAttributes":      adminWrite,
		"RemoveSearchAttributes":   adminWrite,
		"DeleteNamespace":          adminWrite,
		"AddOrUpdateRemoteCluster": adminWrite,
		"RemoveRemoteCluster":      adminWrite,
		"ListClusters":             adminRead,
		"GetNexusEndpoint":         adminRead,
		"ListNexusEndpoints":       adminRead,
		"CreateNexusEndpoint":      adminWrite,
		"UpdateNexusEndpoint":      adminWrite,
		"DeleteNexusEndpoint":      adminWrite,
	}
	for m, r := range o {
		methods[ops+m] = r
	}
	// AdminService is Temporal's own administration (tdbg): histories,
	// shards, queues, replication, DLQs. Every method, present and future,
	// is for an admin of */*.
	admin := adminservice.File_temporal_server_api_adminservice_v1_service_proto.Services().Get(0)
	for _, m := range fullNames(admin) {
		methods[m] = adminWrite
	}
	for _, m := range []string{"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch", "/grpc.health.v1.Health/List"} {
		methods[m] = anyone
	}
	// Reflection describes the API, nothing stored.
	for _, m := range []string{"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"} {
		methods[m] = anyone
	}
	_ = operatorservice.File_temporal_api_operatorservice_v1_service_proto
}

// fullNames are the gRPC full method names of a service.
func fullNames(s protoreflect.ServiceDescriptor) []string {
	var out []string
	for i := 0; i < s.Methods().Len(); i++ {
		out = append(out, "/"+string(s.FullName())+"/"+string(s.Methods().Get(i).Name()))
	}
	return out
}
