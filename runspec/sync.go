package runspec

import "github.com/kumoproj/kumo/engine"

// SyncWorkflow is the workflow type a sync schedule (and the git webhook,
// by triggering the schedule) starts: one look at a git source's ref.
const SyncWorkflow = "SourceSync"

// SyncSchedulePrefix starts the ID of every sync schedule:
// kumo-sync/<project>/<workspace>; Temporal appends each tick's time to its
// action's workflow ID.
const SyncSchedulePrefix = "kumo-sync/"

// SyncScheduleID is the ID of the sync schedule of a stack.
func SyncScheduleID(project, workspace string) string {
	return SyncSchedulePrefix + project + "/" + workspace
}

// SyncInput is what a sync schedule's ticks run with.
type SyncInput struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	// Source is the git source's name; the worker reads it from its backend.
	Source string `json:"source"`
	// Mode is gitsource.ModePreview or gitsource.ModeApply.
	Mode string `json:"mode"`
	// ApprovalRequired: an apply waits for an approval after its preview.
	ApprovalRequired bool            `json:"approvalRequired,omitempty"`
	Parallelism      int             `json:"parallelism,omitempty"`
	Settings         RuntimeSettings `json:"settings"`
}

// SyncCheck is what one look at the source found: the commit its ref is at
// and whether a run for it is due (a commit other than the last one started).
type SyncCheck struct {
	Start bool              `json:"start"`
	Git   *engine.GitOrigin `json:"git"`
	Stack string            `json:"stack,omitempty"`
	// Skipped are commits seen before that the new run supersedes.
	Skipped []string `json:"skipped,omitempty"`
}

// SyncRecord is what a tick did, stored in the stack's sync state.
type SyncRecord struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Source    string `json:"source"`
	Commit    string `json:"commit"`
	// Busy: another run held the stack; the commit stays pending.
	Busy       bool     `json:"busy,omitempty"`
	WorkflowID string   `json:"workflowID,omitempty"`
	RunID      string   `json:"runID,omitempty"`
	Skipped    []string `json:"skipped,omitempty"`
}

// SyncResult is how a tick ended.
type SyncResult struct {
	Commit string `json:"commit"`
	// Outcome: unchanged (no run), busy (another run held the stack),
	// started (and then the run's own outcome in Status).
	Outcome    string   `json:"outcome"`
	WorkflowID string   `json:"workflowID,omitempty"`
	RunID      string   `json:"runID,omitempty"`
	Skipped    []string `json:"skipped,omitempty"`
	Revision   int      `json:"revision,omitempty"`
	Status     Status   `json:"status,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// Sync outcomes.
const (
	SyncUnchanged = "unchanged"
	SyncBusy      = "busy"
	SyncStarted   = "started"
)
