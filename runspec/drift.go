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
	// Drift is the ignore rules (the workspace's, then the project's) and how
	// many reports to keep.
	Drift drift.Config `json:"drift,omitzero"`
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
}

// MaxDriftedIDs bounds DriftResult.NotInSync, so history stays small.
const MaxDriftedIDs = 50
