package authz

import "fmt"

// Role is what a grant gives.
type Role string

const (
	// Viewer lists and shows runs, logs, statuses and drift reports.
	Viewer Role = "viewer"
	// Deployer is a viewer that also previews, applies, destroys, rolls
	// back, cancels and checks drift.
	Deployer Role = "deployer"
	// Approver is a viewer that also approves and rejects runs.
	Approver Role = "approver"
	// Admin may do everything a person may: the other three roles, and
	// workspaces, schedules, unlocking, tokens and the server itself.
	Admin Role = "admin"
	// Worker is the principal kind of kumo's workers: it polls kumo's task
	// queues and completes their tasks. It holds no person's role, and no
	// person's role includes it.
	Worker Role = "worker"
)

// AllRoles lists every role, in the order of the documentation.
var AllRoles = []Role{Viewer, Deployer, Approver, Admin, Worker}

// includes reports whether holding r gives what needed gives.
func (r Role) includes(needed Role) bool {
	switch {
	case r == needed:
		return true
	case r == Admin:
		return needed != Worker
	case r == Deployer || r == Approver:
		return needed == Viewer
	}
	return false
}

func parseRole(s string) (Role, error) {
	for _, r := range AllRoles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("unknown role %q (want viewer, deployer, approver, admin or worker)", s)
}

// Action is what a request does.
type Action string

// Actions on a project and workspace.
const (
	List        Action = "list"
	Show        Action = "show"
	Logs        Action = "logs"
	Status      Action = "status"
	DriftReport Action = "drift-report"

	Generate Action = "generate"
	Preview  Action = "preview"
	Apply    Action = "apply"
	Destroy  Action = "destroy"
	Rollback Action = "rollback"
	Refresh  Action = "refresh"
	// Forget and Move change what a stack's release records, nothing live
	// (kumo release forget, kumo release mv).
	Forget     Action = "forget"
	Move       Action = "move"
	Cancel     Action = "cancel"
	DriftCheck Action = "drift-check"
	// Test runs a release's test hooks in its cluster (kumo test).
	Test Action = "test"

	Approve Action = "approve"
	Reject  Action = "reject"

	Unlock    Action = "unlock"
	Schedule  Action = "schedule"
	Workspace Action = "workspace"
	Token     Action = "token"
	// Terminate ends a run without its compensation, or resets it.
	Terminate Action = "terminate"
	// AdminAction is administering the server: namespaces, search
	// attributes, clusters; only on */*.
	AdminAction Action = "admin"

	// Work is polling a task queue and completing its tasks.
	Work Action = "work"
)

// needs is the role each action takes.
var needs = map[Action]Role{
	List: Viewer, Show: Viewer, Logs: Viewer, Status: Viewer, DriftReport: Viewer,
	Generate: Deployer, Preview: Deployer, Apply: Deployer, Destroy: Deployer, Rollback: Deployer, Refresh: Deployer, Forget: Deployer, Move: Deployer, Cancel: Deployer, DriftCheck: Deployer, Test: Deployer,
	Approve: Approver, Reject: Approver,
	Unlock: Admin, Schedule: Admin, Workspace: Admin, Token: Admin, Terminate: Admin, AdminAction: Admin,
	Work: Worker,
}

// Needs is the role that action takes; ok is false for an action kumo does
// not know, which nobody may do.
func (a Action) Needs() (Role, bool) {
	r, ok := needs[a]
	return r, ok
}
