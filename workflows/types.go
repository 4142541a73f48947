package workflows

import (
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
	// Parallelism bounds how many nodes run at once (default 10).
	Parallelism int `json:"parallelism,omitempty"`
	// AutoApprove skips waiting for an Approval after preview.
	AutoApprove bool `json:"autoApprove,omitempty"`
	// ApprovalTimeout is how long the run waits for approval (default 24 h).
	ApprovalTimeout time.Duration `json:"approvalTimeout,omitempty"`
	// RollbackOnFailure undoes what a failed apply changed, in reverse order.
	RollbackOnFailure bool                    `json:"rollbackOnFailure,omitempty"`
	Settings          runspec.RuntimeSettings `json:"settings"`
}

// Approval answers the preview of an apply or destroy as ApprovalSignal, for
// runs older than ApproveUpdate.
type Approval struct {
	Approved bool `json:"approved"`
}

// Result is how a run ended.
type Result struct {
	Revision int          `json:"revision,omitempty"`
	Phase    engine.Phase `json:"phase,omitempty"`
	// Changes is the preview, one entry per node.
	Changes []engine.Change `json:"changes"`
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
}

// Node is one resource's progress.
type Node struct {
	ID     string        `json:"id"`
	Action engine.Action `json:"action,omitempty"`
	Status NodeStatus    `json:"status"`
	Error  string        `json:"error,omitempty"`
}
