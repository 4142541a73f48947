package runspec

import "time"

// AuditEntry is one accepted or denied action, as whoever decided it (the
// kumo frontend's authorization, a run's approval rules, the client for what
// it does to the backend directly) reports it to the audit log.
type AuditEntry struct {
	Time    time.Time `json:"time"`
	Subject Subject   `json:"subject"`
	// Action is what was asked: "start apply", "approve", "reject",
	// "cancel", "unlock", "workspace update", ...
	Action    string `json:"action"`
	Project   string `json:"project,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	// Target names what the action was on: a workflow ID, a schedule, a
	// workspace, a token.
	Target  string `json:"target,omitempty"`
	Allowed bool   `json:"allowed"`
	// Reason says why it was denied (or what was said, for an allowed one).
	Reason string `json:"reason,omitempty"`
}
