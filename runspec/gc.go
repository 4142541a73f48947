package runspec

import "time"

// GCWorkflow is the workflow type of a collection of kumo's own records
// (backend.Collect): started by the GC schedule a kumo server keeps, or by
// hand. Only an admin of every project and workspace may start it.
const GCWorkflow = "BackendGC"

// GCScheduleID is the ID of the schedule a kumo server keeps; GCWorkflowID
// starts the ID of every collection (the schedule appends each one's time).
const (
	GCScheduleID = "kumo-gc"
	GCWorkflowID = "kumo-gc/collect"
)

// GCInput is a collection's retention policy (backend.GCPolicy) and whether
// it only reports.
type GCInput struct {
	RunLogs      time.Duration `json:"runLogs"`
	DriftReports time.Duration `json:"driftReports"`
	Requests     time.Duration `json:"requests"`
	Audit        time.Duration `json:"audit,omitempty"`
	Grace        time.Duration `json:"grace"`
	// Releases is the release history limit: revisions kept per
	// project/workspace (0: every one).
	Releases int  `json:"releases,omitempty"`
	DryRun   bool `json:"dryRun,omitempty"`
}

// GCResult is what a collection removed (backend.GCReport without the list
// of keys, which can be long: the worker logs them).
type GCResult struct {
	Specs        int   `json:"specs"`
	Chunks       int   `json:"chunks"`
	StateDirs    int   `json:"stateDirs"`
	RunLogs      int   `json:"runLogs"`
	DriftReports int   `json:"driftReports"`
	Requests     int   `json:"requests"`
	AuditDays    int   `json:"auditDays"`
	Bytes        int64 `json:"bytes"`
	Restored     int   `json:"restored"`
	Waiting      int   `json:"waiting"`
	Releases     int   `json:"releases"`
	// Revisions is how many release revisions were removed (past the
	// release history limit), in PrunedWorkspaces project/workspaces; the
	// worker logs which.
	Revisions        int `json:"revisions,omitempty"`
	PrunedWorkspaces int `json:"prunedWorkspaces,omitempty"`
}
