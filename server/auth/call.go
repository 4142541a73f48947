package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/runspec"
)

// call is one request being authorized.
type call struct {
	i      *Interceptor
	ctx    context.Context
	p      principal
	method string
	req    any
	// workerCall: a worker's call (set by the worker rule), whose Identity
	// keeps the worker's own description after the subject.
	workerCall bool
}

// decide asks the policy; a write is audited, allowed or not.
func (c *call) decide(action authz.Action, project, workspace, target string, write bool) error {
	err := c.i.policy.Decide(c.p.subject, action, project, workspace)
	if write {
		c.audit(action, project, workspace, target, err)
	}
	if err != nil {
		return status.Error(codes.PermissionDenied, err.Error())
	}
	return nil
}

// deny refuses for a reason of the request's shape (a workflow type, a
// queue, an ID), audited like a policy denial.
func (c *call) deny(action authz.Action, project, workspace, target, format string, args ...any) error {
	where := project + "/" + workspace
	if project == "" && workspace == "" {
		where = "*/*"
	}
	err := fmt.Errorf("%s may not %s %s: %s", c.p.subject.Name, action, where, fmt.Sprintf(format, args...))
	c.audit(action, project, workspace, target, err)
	return status.Error(codes.PermissionDenied, err.Error())
}

func (c *call) audit(action authz.Action, project, workspace, target string, err error) {
	if c.i.auditor == nil {
		return
	}
	e := Entry{Time: time.Now().UTC(), Subject: c.p.subject.Name, Action: action, Project: project, Workspace: workspace, Target: target, Allowed: err == nil, Reason: c.method}
	if err != nil {
		e.Reason = err.Error()
	}
	c.i.auditor.Record(c.ctx, e)
}

// subjectFor is the header payload of the caller on project/workspace.
func (c *call) subjectFor(project, workspace string) *commonpb.Payload {
	return subjectPayload(c.p.subject, c.i.policy.Roles(c.p.subject, project, workspace))
}

// byWorkflowID decides action on the project/workspace of a run's ID. A
// write to a workflow that is not kumo's takes an admin of */*.
func (c *call) byWorkflowID(action authz.Action, id string, write bool) (project, workspace string, err error) {
	kind, p, w := parseWorkflowID(id)
	if kind == notKumo && write {
		action = authz.Terminate
	}
	return p, w, c.decide(action, p, w, id, write)
}

// startParams are the parts of a start request the decision reads.
type startParams struct {
	id, workflowType, taskQueue string
	reuse                       enumspb.WorkflowIdReusePolicy
	conflict                    enumspb.WorkflowIdConflictPolicy
	cron                        string
	eager                       bool
	callbacks                   int
	attrs                       *commonpb.SearchAttributes
}

func startOf(r *workflowservice.StartWorkflowExecutionRequest) startParams {
	return startParams{
		id: r.GetWorkflowId(), workflowType: r.GetWorkflowType().GetName(), taskQueue: r.GetTaskQueue().GetName(),
		reuse: r.GetWorkflowIdReusePolicy(), conflict: r.GetWorkflowIdConflictPolicy(), cron: r.GetCronSchedule(),
		eager: r.GetRequestEagerExecution(), attrs: r.GetSearchAttributes(),
		callbacks: len(r.GetCompletionCallbacks()) + boolInt(r.GetOnConflictOptions().GetAttachCompletionCallbacks()),
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// kumoTypes lists kumo's workflow types, for messages.
func kumoTypes() string {
	var ts []string
	for t := range workflowTypes {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return strings.Join(ts, ", ")
}

// checkStart decides a start: only kumo's workflow types, on kumo's task
// queue, with the ID form of the type, whose project/workspace decides the
// role; what would end another run (terminate-existing policies) takes an
// admin, a cron schedule the schedule right, eager execution a worker; the
// search attributes may not file the run under another project or
// workspace; completion callbacks (requests to arbitrary URLs) are refused.
func (c *call) checkStart(s startParams) (project, workspace string, err error) {
	rule, ok := workflowTypes[s.workflowType]
	kind, p, w := parseWorkflowID(s.id)
	if q, admin := c.i.adminTypes[s.workflowType]; !ok && admin && s.taskQueue == q {
		return "", "", c.decide(authz.AdminAction, "", "", s.id, true)
	}
	if !ok {
		return p, w, c.deny(authz.Apply, p, w, s.id, "workflow type %q is not kumo's; only %s may be started here", s.workflowType, kumoTypes())
	}
	if !c.i.taskQueues[s.taskQueue] {
		return p, w, c.deny(rule.action, p, w, s.id, "task queue %q is not kumo's", s.taskQueue)
	}
	if kind != rule.kind {
		return p, w, c.deny(rule.action, p, w, s.id, "workflow ID %q is not the ID of a %s run (see runspec/ids.go)", s.id, s.workflowType)
	}
	// A rollout's rights are decided on each of its workspaces
	// (rolloutScope), not on its ID's project/*.
	if kind != rolloutRun {
		if err := c.decide(rule.action, p, w, s.id, true); err != nil {
			return p, w, err
		}
	}
	if s.conflict == enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING || s.reuse == enumspb.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING {
		if err := c.decide(authz.Terminate, p, w, s.id, true); err != nil {
			return p, w, err
		}
	}
	if s.cron != "" {
		if err := c.decide(authz.Schedule, p, w, s.id, true); err != nil {
			return p, w, err
		}
	}
	if s.eager {
		if err := c.decide(authz.Work, "", "", s.id, true); err != nil {
			return p, w, err
		}
	}
	if s.callbacks > 0 {
		return p, w, c.deny(rule.action, p, w, s.id, "completion callbacks are not allowed")
	}
	for attr, want := range map[string]string{runspec.AttrProject: p, runspec.AttrWorkspace: w} {
		pl, ok := s.attrs.GetIndexedFields()[attr]
		if !ok {
			continue
		}
		var got string
		if json.Unmarshal(pl.GetData(), &got) != nil || got != want {
			return p, w, c.deny(rule.action, p, w, s.id, "search attribute %s must be %q, the run's, not %s", attr, want, pl.GetData())
		}
	}
	return p, w, c.admit(rule.action, p, w, s.id)
}

// scoped narrows a visibility query to what the subject may view; a subject
// who views */* keeps its query.
func (c *call) scoped(query string, set func(string)) error {
	scopes, all := c.i.policy.ViewScopes(c.p.subject)
	if all {
		return nil
	}
	if len(scopes) == 0 {
		return c.decide(authz.List, "", "", "", false)
	}
	q, err := scopeQuery(query, scopes)
	if err != nil {
		var in []string
		for _, s := range scopes {
			in = append(in, s.String())
		}
		return status.Errorf(codes.PermissionDenied, "%s may not list with query %q: %v (it views only %s)", c.p.subject.Name, query, err, strings.Join(in, ", "))
	}
	set(q)
	return nil
}
