package auth

import (
	"encoding/json"

	"slices"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/runspec"
)

// A rollout (kumo-rollout/<project>/<name>) acts on many workspaces of its
// project, which its ID does not name: its start and its control updates
// name them in runspec.RolloutScopeHeader, and each is decided here on its
// own project/workspace, as a run's start on that workspace would be. One
// denial refuses the whole request. The header is then replaced with the
// roles found on each workspace, marked verified, which the workflow checks
// before it starts a child on a workspace (starts) and before it takes a
// pause, resume, abort or approval (updates). Reads of a rollout (status,
// history) and other writes to it are decided on <project>/* by its ID.

// maxScopeWorkspaces bounds the workspaces one request may name
// (engine/rollout.MaxWorkspaces, with room for growth).
const maxScopeWorkspaces = 1000

// rolloutScope decides actions on every workspace the request's scope header
// names and stamps the verified scope and the subject in header.
func (c *call) rolloutScope(h **commonpb.Header, project, target string, actions ...authz.Action) error {
	p := (*h).GetFields()[runspec.RolloutScopeHeader]
	var asked runspec.RolloutScope
	if p == nil || json.Unmarshal(p.GetData(), &asked) != nil || len(asked.Workspaces) == 0 {
		return c.deny(actions[0], project, "*", target, "a request to rollout %s must name the rollout's workspaces in header %s", target, runspec.RolloutScopeHeader)
	}
	if len(asked.Workspaces) > maxScopeWorkspaces {
		return c.deny(actions[0], project, "*", target, "a rollout request may name at most %d workspaces, not %d", maxScopeWorkspaces, len(asked.Workspaces))
	}
	names := make([]string, 0, len(asked.Workspaces))
	for ws := range asked.Workspaces {
		if !name(ws) {
			return c.deny(actions[0], project, "*", target, "workspace %q in header %s is not a workspace name", ws, runspec.RolloutScopeHeader)
		}
		names = append(names, ws)
	}
	slices.Sort(names)
	verified := runspec.RolloutScope{Workspaces: map[string][]string{}, Verified: true}
	for _, ws := range names {
		for _, a := range actions {
			if err := c.decide(a, project, ws, target, true); err != nil {
				return err
			}
		}
		verified.Workspaces[ws] = c.i.policy.Roles(c.p.subject, project, ws)
	}
	data, err := json.Marshal(verified)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	stampHeader(h, c.subjectFor(project, "*"))
	(*h).Fields[runspec.RolloutScopeHeader] = &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: data}
	return nil
}

// rolloutUpdate decides the control and approve updates of a rollout; done
// is false for any other update, which update decides as before.
func (c *call) rolloutUpdate(r *workflowservice.UpdateWorkflowExecutionRequest) (done bool, err error) {
	in := r.GetRequest().GetInput()
	id := r.GetWorkflowExecution().GetWorkflowId()
	kind, p, _ := parseWorkflowID(id)
	if kind != rolloutRun {
		return false, nil
	}
	var action authz.Action
	switch in.GetName() {
	case runspec.RolloutControlUpdate:
		action = authz.Cancel
	case runspec.RolloutApproveUpdate:
		action = authz.Approve
	default:
		return false, nil
	}
	if in == nil {
		return true, status.Error(codes.InvalidArgument, "update without input")
	}
	if err := c.rolloutScope(&in.Header, p, id, action); err != nil {
		return true, err
	}
	if meta := r.GetRequest().GetMeta(); meta != nil {
		meta.Identity = c.p.subject.Name
	}
	return true, nil
}
