package workflows

import (
	"fmt"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// RunInput starts a Preview, Apply or Destroy.
type RunInput struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Stack     string `json:"stack,omitempty"`
	// SpecHash names the desired spec in the backend (unused by Destroy).
	SpecHash string `json:"specHash,omitempty"`
	// Source, when SpecHash is empty, is the stack a Preview or Apply generates
	// its spec from first.
	Source *runspec.GenerateInput `json:"source,omitempty"`
	// RollbackOf is the revision a Rollback restores (SpecHash is its spec).
	RollbackOf int `json:"rollbackOf,omitempty"`
	// Reason is recorded in the release: why a run no one typed was started.
	Reason string `json:"reason,omitempty"`
	// Parallelism bounds how many nodes run at once (default 10).
	Parallelism int `json:"parallelism,omitempty"`
	// AutoApprove skips waiting for an Approval after preview.
	AutoApprove bool `json:"autoApprove,omitempty"`
	// ApprovalTimeout is how long the run waits for approval (default 24 h).
	ApprovalTimeout time.Duration `json:"approvalTimeout,omitempty"`
	// RollbackOnFailure undoes what a failed apply changed, in reverse order.
	RollbackOnFailure bool                    `json:"rollbackOnFailure,omitempty"`
	Settings          runspec.RuntimeSettings `json:"settings"`
	// Wait is when an applied node is done: engine.WaitHealthy (default) or
	// engine.WaitApplied; a resource's extensions may say otherwise.
	Wait string `json:"wait,omitempty"`
	// Timeout bounds each resource's wait for health (default 5m).
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Approval answers the preview of an apply or destroy as ApprovalSignal, for
// runs older than ApproveUpdate.
type Approval struct {
	Approved bool `json:"approved"`
}

// Cancel carries the reason a run is being cancelled (CancelSignal). It comes
// before Temporal's cancel request, which carries no reason to the workflow.
type Cancel struct {
	Reason string `json:"reason,omitempty"`
}

// Result is how a run ended.
type Result struct {
	Revision int          `json:"revision,omitempty"`
	Phase    engine.Phase `json:"phase,omitempty"`
	// Status is succeeded, failed or cancelled (a cancel request, or an apply
	// whose preview was not approved). Empty from runs older than it.
	Status Status `json:"status,omitempty"`
	// Changes is the preview, one entry per node, unless there are too many
	// to carry in one result: then it is nil, ChangesOmitted counts them and
	// the run answers them page by page (ProgressPageQuery).
	Changes        []engine.Change `json:"changes"`
	ChangesOmitted int             `json:"changesOmitted,omitempty"`
	// Digest is the preview's engine.PlanDigest.
	Digest       string               `json:"digest,omitempty"`
	Error        string               `json:"error,omitempty"`
	Compensation *engine.Compensation `json:"compensation,omitempty"`
}

// Stage is where a run is; the release phase says the same in the backend.
type Stage string

const (
	StageGenerating   Stage = "generating"
	StagePlanning     Stage = "planning"
	StagePreview      Stage = "previewing"
	StageApproval     Stage = "awaiting-approval"
	StageApplying     Stage = "applying"
	StageDestroying   Stage = "destroying"
	StageCompensating Stage = "compensating"
	StageDone         Stage = "done"
)

// NodeStatus is where one resource is in a run.
type NodeStatus string

const (
	NodePending   NodeStatus = "pending"
	NodeRunning   NodeStatus = "running"
	NodeSucceeded NodeStatus = "succeeded"
	NodeUnchanged NodeStatus = "unchanged"
	NodeFailed    NodeStatus = "failed"
	NodeSkipped   NodeStatus = "skipped"
	// NodeCompensated: applied, then undone after another node failed.
	NodeCompensated NodeStatus = "compensated"
)

// Progress answers ProgressQuery.
type Progress struct {
	Stage    Stage  `json:"stage"`
	Revision int    `json:"revision,omitempty"`
	Nodes    []Node `json:"nodes,omitempty"`
	// Changes is filled once the preview is complete.
	Changes []engine.Change `json:"changes,omitempty"`
	// Digest is the preview's engine.PlanDigest, with Changes.
	Digest string `json:"digest,omitempty"`
	// Approval is set once the run waits for approval.
	Approval *ApprovalState `json:"approval,omitempty"`
	// Waiting says why the run stands still, e.g. "waiting for a worker on
	// queue edge". The client fills it in from Temporal (the workflow cannot
	// know who polls its queues).
	Waiting string `json:"waiting,omitempty"`
}

// Node is one resource's progress.
type Node struct {
	ID     string        `json:"id"`
	Action engine.Action `json:"action,omitempty"`
	Status NodeStatus    `json:"status"`
	Error  string        `json:"error,omitempty"`
	// Started and Finished bound the node's apply or delete, in workflow time
	// (the time of the workflow task that saw it start or end).
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	// Health is how the resource's health went while its node waited for it
	// ("Progressing: 1/3 replicas available → Healthy"); empty when its node
	// did not wait.
	Health string `json:"health,omitempty"`
}

// Status is a run's KumoStatus search attribute: where it is, in the words of
// `kumo run list`, kept current by the workflow.
type Status string

const (
	// StatusRunning: generating, planning or previewing (set when the run starts).
	StatusRunning          Status = "running"
	StatusAwaitingApproval Status = "awaiting-approval"
	StatusApplying         Status = "applying"
	StatusDestroying       Status = "destroying"
	StatusCompensating     Status = "compensating"
	StatusSucceeded        Status = "succeeded"
	StatusFailed           Status = "failed"
	StatusCancelled        Status = "cancelled"
)

// Final reports whether a run with this status has ended.
func (s Status) Final() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCancelled
}

// ChangeCounts is the preview in numbers, kept in the run's memo (ChangesMemo)
// so a list of runs shows them without asking each run.
type ChangeCounts struct {
	Create    int `json:"create"`
	Update    int `json:"update"`
	Delete    int `json:"delete"`
	Unchanged int `json:"unchanged"`
	// Adopt counts live resources kumo takes over unchanged.
	Adopt int `json:"adopt,omitempty"`
}

// String is the counts as `+create ~update -delete`.
func (c ChangeCounts) String() string {
	s := fmt.Sprintf("+%d ~%d -%d", c.Create, c.Update, c.Delete)
	if c.Adopt > 0 {
		s += fmt.Sprintf(" adopt %d", c.Adopt)
	}
	return s
}

// CountChanges counts a preview's changes per action.
func CountChanges(changes []engine.Change) ChangeCounts {
	var c ChangeCounts
	for _, ch := range changes {
		switch ch.Action {
		case engine.Create:
			c.Create++
		case engine.Update:
			c.Update++
		case engine.Delete:
			c.Delete++
		case engine.Adopt:
			c.Adopt++
		default:
			c.Unchanged++
		}
	}
	return c
}
