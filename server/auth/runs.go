package auth

import (
	"fmt"
	"strings"

	schedulepb "go.temporal.io/api/schedule/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/runspec"
)

// startWorkflow: a kumo run, stamped with its starter.
func startWorkflow(c *call, r *workflowservice.StartWorkflowExecutionRequest) error {
	p, w, err := c.checkStart(startOf(r))
	if err != nil {
		return err
	}
	if r.GetWorkflowType().GetName() == runspec.RolloutWorkflow {
		if err := c.rolloutScope(&r.Header, p, r.GetWorkflowId(), authz.Apply, authz.Rollback); err != nil {
			return err
		}
	}
	stampHeader(&r.Header, c.subjectFor(p, w))
	stampStarter(&r.SearchAttributes, c.p.subject.Name)
	return nil
}

// signalWithStart is a start and a signal: both must be allowed.
func signalWithStart(c *call, r *workflowservice.SignalWithStartWorkflowExecutionRequest) error {
	p, w, err := c.checkStart(startParams{
		id: r.GetWorkflowId(), workflowType: r.GetWorkflowType().GetName(), taskQueue: r.GetTaskQueue().GetName(),
		reuse: r.GetWorkflowIdReusePolicy(), conflict: r.GetWorkflowIdConflictPolicy(), cron: r.GetCronSchedule(),
		attrs: r.GetSearchAttributes(),
	})
	if err != nil {
		return err
	}
	if r.GetWorkflowType().GetName() == runspec.RolloutWorkflow {
		return c.deny(authz.Apply, p, w, r.GetWorkflowId(), "a rollout is started with StartWorkflowExecution only")
	}
	if err := c.decide(signalAction(r.GetSignalName()), p, w, r.GetWorkflowId(), true); err != nil {
		return err
	}
	stampHeader(&r.Header, c.subjectFor(p, w))
	stampStarter(&r.SearchAttributes, c.p.subject.Name)
	return nil
}

// multiOperation: every operation (a start, an update) must be allowed.
func multiOperation(c *call, r *workflowservice.ExecuteMultiOperationRequest) error {
	if len(r.GetOperations()) == 0 {
		return status.Error(codes.InvalidArgument, "no operations")
	}
	for _, op := range r.GetOperations() {
		switch {
		case op.GetStartWorkflow() != nil:
			s := op.GetStartWorkflow()
			if s.GetNamespace() == "" {
				s.Namespace = r.GetNamespace()
			}
			if err := startWorkflow(c, s); err != nil {
				return err
			}
			setIdentity(s, c.p.subject.Name, false)
		case op.GetUpdateWorkflow() != nil:
			if err := update(c, op.GetUpdateWorkflow()); err != nil {
				return err
			}
		default:
			return status.Errorf(codes.PermissionDenied, "%s may not run an operation of a kind kumo's frontend does not know", c.p.subject.Name)
		}
	}
	return nil
}

// signal: kumo's approval and cancel signals take those rights; any other
// signal an admin.
func signal(c *call, r *workflowservice.SignalWorkflowExecutionRequest) error {
	p, w, err := c.byWorkflowID(signalAction(r.GetSignalName()), r.GetWorkflowExecution().GetWorkflowId(), true)
	if err != nil {
		return err
	}
	stampHeader(&r.Header, c.subjectFor(p, w))
	return nil
}

// update: kumo's approve update takes the approve right; any other an admin.
func update(c *call, r *workflowservice.UpdateWorkflowExecutionRequest) error {
	in := r.GetRequest().GetInput()
	if done, err := c.rolloutUpdate(r); done {
		return err
	}
	p, w, err := c.byWorkflowID(updateAction(in.GetName()), r.GetWorkflowExecution().GetWorkflowId(), true)
	if err != nil {
		return err
	}
	if in == nil {
		return status.Error(codes.InvalidArgument, "update without input")
	}
	stampHeader(&in.Header, c.subjectFor(p, w))
	if meta := r.GetRequest().GetMeta(); meta != nil {
		meta.Identity = c.p.subject.Name
	}
	return nil
}

// scheduleWrite: a drift schedule takes the schedule right on its
// project/workspace, any other schedule an admin of */*; a schedule's action
// must be a start of a kumo run the subject may start, stamped with the
// subject.
func (c *call) scheduleWrite(id string, s *schedulepb.Schedule) error {
	p, w, ok := parseScheduleID(id)
	if !ok {
		p, w = "", ""
	}
	if err := c.decide(authz.Schedule, p, w, id, true); err != nil {
		return err
	}
	if s == nil {
		return nil
	}
	start := s.GetAction().GetStartWorkflow()
	if start == nil {
		return c.deny(authz.Schedule, p, w, id, "a schedule's action must start a kumo run")
	}
	if start.GetWorkflowType().GetName() == runspec.RolloutWorkflow {
		return c.deny(authz.Schedule, p, w, id, "a schedule may not start rollouts")
	}
	want := runspec.DriftWorkflow
	if strings.HasPrefix(id, runspec.SyncSchedulePrefix) {
		want = runspec.SyncWorkflow
	}
	if id == runspec.GCScheduleID && start.GetWorkflowType().GetName() != runspec.GCWorkflow {
		return c.deny(authz.Schedule, p, w, id, "schedule %s may start %s runs only, not %s", id, runspec.GCWorkflow, start.GetWorkflowType().GetName())
	}
	if ok && start.GetWorkflowType().GetName() != want {
		return c.deny(authz.Schedule, p, w, id, "schedule %s may start %s runs only, not %s", id, want, start.GetWorkflowType().GetName())
	}
	sp, sw, err := c.checkStart(startParams{
		id: start.GetWorkflowId(), workflowType: start.GetWorkflowType().GetName(), taskQueue: start.GetTaskQueue().GetName(),
		reuse: start.GetWorkflowIdReusePolicy(), cron: start.GetCronSchedule(), attrs: start.GetSearchAttributes(),
	})
	if err != nil {
		return err
	}
	if ok && (sp != p || sw != w) {
		return c.deny(authz.Schedule, p, w, id, "schedule %s may start runs of %s/%s only, not %s/%s", id, p, w, sp, sw)
	}
	stampHeader(&start.Header, c.subjectFor(sp, sw))
	stampStarter(&start.SearchAttributes, c.p.subject.Name)
	return nil
}

// scheduleRead: viewing a drift schedule takes the view right on its
// project/workspace, any other schedule a viewer of */*.
func (c *call) scheduleRead(id string) error {
	p, w, ok := parseScheduleID(id)
	if !ok {
		p, w = "", ""
	}
	return c.decide(authz.Show, p, w, id, false)
}

// auditRefusedUpdate records an update the frontend let through but the run
// refused (its validator: four eyes, a second approval by the same person, a
// stale plan digest) as denied: only the response says so, as a refused
// update leaves nothing in the run's history.
func (c *call) auditRefusedUpdate(resp any) {
	r, ok := c.req.(*workflowservice.UpdateWorkflowExecutionRequest)
	if !ok {
		return
	}
	answer, _ := resp.(*workflowservice.UpdateWorkflowExecutionResponse)
	failure := answer.GetOutcome().GetFailure()
	if failure == nil {
		return
	}
	id := r.GetWorkflowExecution().GetWorkflowId()
	_, p, w := parseWorkflowID(id)
	c.audit(updateAction(r.GetRequest().GetInput().GetName()), p, w, id, fmt.Errorf("refused by the run: %s", failure.GetMessage()))
}
