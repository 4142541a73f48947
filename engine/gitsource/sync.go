package gitsource

import (
	"fmt"
	"slices"
	"time"
)

// Sync modes: what a new commit starts.
const (
	ModePreview = "preview"
	ModeApply   = "apply"
)

// SyncState is what a stack's sync remembers between ticks: the commit it
// last started a run for, and the commits it saw but did not deploy.
type SyncState struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Source    string `json:"source"`
	// Commit is the commit the last started run deploys (or previews);
	// WorkflowID and RunID name that run.
	Commit     string    `json:"commit,omitempty"`
	WorkflowID string    `json:"workflowID,omitempty"`
	RunID      string    `json:"runID,omitempty"`
	Time       time.Time `json:"time,omitzero"`
	// Pending are commits seen while the stack was busy, oldest first: the
	// next run deploys the newest commit, and these are reported as skipped.
	Pending []string `json:"pending,omitempty"`
	// Skipped are the commits the last started run superseded.
	Skipped []string `json:"skipped,omitempty"`
}

// maxPending bounds the commits a state remembers as seen-but-busy.
const maxPending = 50

// Decision is what one tick does with the commit the ref is at.
type Decision struct {
	// Start: a run for Commit is due. Otherwise the commit is the one last
	// started, and nothing happens.
	Start  bool
	Commit string
	// Skipped are the commits seen before and never deployed that this run
	// supersedes.
	Skipped []string
}

// Decide compares the commit a ref is at with the state: a different commit
// (newer, or older after a force-push) is a new deploy; the same one is not.
func (s SyncState) Decide(commit string) Decision {
	if commit == s.Commit {
		return Decision{Commit: commit}
	}
	return Decision{Start: true, Commit: commit, Skipped: slices.DeleteFunc(slices.Clone(s.Pending), func(c string) bool { return c == commit })}
}

// Busy records that commit was due but the stack was busy (another run held
// it): it stays pending until a run deploys a newer one.
func (s *SyncState) Busy(commit string) {
	if !slices.Contains(s.Pending, commit) {
		s.Pending = append(s.Pending, commit)
	}
	if len(s.Pending) > maxPending {
		s.Pending = s.Pending[len(s.Pending)-maxPending:]
	}
}

// Started records the run started for d.
func (s *SyncState) Started(d Decision, workflowID, runID string, now time.Time) {
	s.Commit, s.WorkflowID, s.RunID, s.Time = d.Commit, workflowID, runID, now
	s.Skipped, s.Pending = d.Skipped, nil
}

// String is a one-line account of the state.
func (s SyncState) String() string {
	return fmt.Sprintf("%s/%s from source %s at %.12s", s.Project, s.Workspace, s.Source, s.Commit)
}
