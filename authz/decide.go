package authz

import (
	"fmt"
	"slices"
	"strings"
)

// held is one role a subject holds, and where.
type held struct {
	role  Role
	scope Scope
}

// holdings are the subject's roles: the owner's implicit ones, then the
// grants naming it or one of its groups.
func (p *Policy) holdings(s Subject) []held {
	var hs []held
	if s.Name != "" && s.Name == p.Owner {
		hs = append(hs, held{Admin, Everywhere}, held{Worker, Everywhere})
	}
	for _, g := range p.Grants {
		if !g.names(s) {
			continue
		}
		for _, sc := range g.Scopes {
			hs = append(hs, held{g.Role, sc})
		}
	}
	return hs
}

func (g Grant) names(s Subject) bool {
	if s.Name == "" {
		return false
	}
	for _, n := range g.Subjects {
		if n == s.Name {
			return true
		}
		if grp, ok := strings.CutPrefix(n, GroupPrefix); ok && slices.Contains(s.Groups, grp) {
			return true
		}
	}
	return false
}

// Decide returns nil if subject may do action on project/workspace, else a
// *DeniedError saying who, what, where and which role it takes. An empty
// project and workspace is the server as a whole (roles on */* only). An
// action kumo does not know is denied.
func (p *Policy) Decide(s Subject, action Action, project, workspace string) error {
	need, ok := action.Needs()
	if ok {
		for _, h := range p.holdings(s) {
			if h.role.includes(need) && h.scope.matches(project, workspace) {
				return nil
			}
		}
	}
	return &DeniedError{Subject: s.Name, Action: action, Project: project, Workspace: workspace, Needs: need, known: ok, has: p.holdings(s)}
}

// Roles are the roles s holds on project/workspace, admin implying the
// others (worker is a principal kind, not listed), sorted: what the frontend
// stamps on a request for the workflow to read.
func (p *Policy) Roles(s Subject, project, workspace string) []string {
	var out []string
	for _, r := range []Role{Viewer, Deployer, Approver, Admin} {
		for _, h := range p.holdings(s) {
			if h.role.includes(r) && h.scope.matches(project, workspace) {
				out = append(out, string(r))
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// IsWorker reports whether s is a worker principal on project/workspace.
func (p *Policy) IsWorker(s Subject, project, workspace string) bool {
	return p.Decide(s, Work, project, workspace) == nil
}

// ViewScopes are the scopes on which s may view runs: what a list of runs
// is narrowed to. all is true when s views everything (*/*).
func (p *Policy) ViewScopes(s Subject) (scopes []Scope, all bool) {
	for _, h := range p.holdings(s) {
		if !h.role.includes(Viewer) {
			continue
		}
		if h.scope == Everywhere {
			return nil, true
		}
		if !slices.Contains(scopes, h.scope) {
			scopes = append(scopes, h.scope)
		}
	}
	return scopes, false
}

// DeniedError is a refusal: it names the subject, the action, the
// project/workspace, the role it takes and what the subject holds.
type DeniedError struct {
	Subject            string
	Action             Action
	Project, Workspace string
	// Needs is the role the action takes; empty for an unknown action.
	Needs Role
	known bool
	has   []held
}

func (e *DeniedError) Error() string {
	who := e.Subject
	if who == "" {
		who = "an unauthenticated caller"
	}
	where := e.Project + "/" + e.Workspace
	if e.Project == "" && e.Workspace == "" {
		where = "*/*"
	}
	if !e.known {
		return fmt.Sprintf("%s may not %s %s: kumo knows no such action, so nobody may", who, e.Action, where)
	}
	var has []string
	for _, h := range e.has {
		has = append(has, fmt.Sprintf("%s on %s", h.role, h.scope))
	}
	holds := who + " has no role"
	if len(has) > 0 {
		holds = who + " has " + strings.Join(has, ", ")
	}
	return fmt.Sprintf("%s may not %s %s: that needs role %s on %s (%s)", who, e.Action, where, e.Needs, where, holds)
}
