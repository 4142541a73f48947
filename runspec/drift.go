package runspec

import (
	"time"

	"github.com/kumoproj/kumo/engine/drift"
)

// DriftInput starts a drift check of one project+workspace.
type DriftInput struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Stack     string `json:"stack,omitempty"`
	// CheckTime is set by the workflow (its clock), so a retried check stores
	// the same report.
	CheckTime   time.Time       `json:"checkTime,omitzero"`
	Settings    RuntimeSettings `json:"settings"`
	Parallelism int             `json:"parallelism,omitempty"`
	// Drift is the ignore rules (the workspace's, then the project's), how
	// many reports to keep, the remediation policy and the webhook.
	Drift drift.Config `json:"drift,omitzero"`
	// Mode is drift.ModeWarn (default) or drift.ModeRemediate.
	Mode string `json:"mode,omitempty"`
}

// DriftResult is what a drift check returns through workflow history: the
// counts and the drifted resources' IDs (at most MaxDriftedIDs); the full
// report is in the backend, under RunID.
type DriftResult struct {
	RunID    string       `json:"runID"`
	Revision int          `json:"revision"`
	Counts   drift.Counts `json:"counts"`
	Summary  string       `json:"summary"`
	// NotInSync lists "<status> <id>" for resources that are not in sync.
	NotInSync []string `json:"notInSync,omitempty"`
	ExitCode  int      `json:"exitCode"`
	// Stack and SpecHash are the checked release's: what a remediation
	// re-applies.
	Stack    string `json:"stack,omitempty"`
	SpecHash string `json:"specHash,omitempty"`
	// Remediation is what a remediate-mode check decided; Events the changes
	// of drift state to announce.
	Remediation *drift.Remediation `json:"remediation,omitempty"`
	Events      []drift.Event      `json:"events,omitempty"`
}

// RemediationRecord is how the remediation a check started ended, for its
// report.
type RemediationRecord struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	// Check is the check's run ID (its report's name).
	Check string `json:"check"`
	// Keep is how many reports the stack keeps.
	Keep       int    `json:"keep,omitempty"`
	WorkflowID string `json:"workflowID"`
	Revision   int    `json:"revision,omitempty"`
	// Outcome is drift.OutcomeSucceeded, OutcomeFailed or OutcomeBusy.
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// DriftNotice is one webhook POST: where to, what it may reach and which
// secret signs it (by the name of the worker's variable, never the secret).
type DriftNotice struct {
	Webhook drift.Webhook `json:"webhook,omitzero"`
	// URL is where notices scheduled before Webhook existed POST to; such a
	// notice carries no allowances and no secret, so it is refused.
	URL   string      `json:"url,omitempty"`
	Event drift.Event `json:"event"`
}

// DriftWebhookURL names what a sealed drift webhook URL is
// (backend.SealText): the client seals it into a check's input, the worker
// opens it to POST.
const DriftWebhookURL = "drift webhook URL"

// MaxDriftedIDs bounds DriftResult.NotInSync, so history stays small.
const MaxDriftedIDs = 50
