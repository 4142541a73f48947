package runspec

import (
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/planpolicy"
)

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
	// Digest is the preview's engine.PlanDigest, with Changes
	// (engine.PolicyDigest when policies were violated).
	Digest string `json:"digest,omitempty"`
	// Policies are the plan policy rules the plan violates (deny, warn,
	// require-approval), once they were checked.
	Policies []planpolicy.Violation `json:"policies,omitempty"`
	// Approval is set once the run waits for approval.
	Approval *ApprovalState `json:"approval,omitempty"`
	// Target is what a partial run was narrowed to (--target).
	Target *engine.Targeting `json:"target,omitempty"`
	// People are who started the run and who approved, rejected or
	// cancelled it, with when (runs older than this record leave it nil).
	People *engine.People `json:"people,omitempty"`
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

// ProgressRequest says which part of a run's progress to answer.
type ProgressRequest struct {
	// Since: answer only the nodes that changed after this point of the run
	// (a ProgressPage.Seq); 0 for every node.
	Since uint64 `json:"since,omitempty"`
	// NodesFrom and MaxNodes page the nodes: those from index NodesFrom on,
	// at most MaxNodes of them (0: none).
	NodesFrom int `json:"nodesFrom,omitempty"`
	MaxNodes  int `json:"maxNodes,omitempty"`
	// ChangesFrom and MaxChanges page the preview's changes likewise.
	ChangesFrom int `json:"changesFrom,omitempty"`
	MaxChanges  int `json:"maxChanges,omitempty"`
}

// ProgressPage is a page of a run's Progress: Nodes and Changes hold the
// requested part only.
type ProgressPage struct {
	Progress
	// Seq is the point of the run this answer describes: ask with Since set
	// to it for what changed after.
	Seq uint64 `json:"seq"`
	// NodeIndex[k] is the plan index of Nodes[k].
	NodeIndex []int `json:"nodeIndex,omitempty"`
	// NextNode is the index to ask from for the rest of the nodes changed
	// since Since; 0 when this page has them all.
	NextNode int `json:"nextNode,omitempty"`
	// TotalNodes and TotalChanges count the whole run's nodes and changes.
	TotalNodes   int `json:"totalNodes"`
	TotalChanges int `json:"totalChanges"`
}
