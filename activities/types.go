package activities

import (
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/runspec"
)

// The inputs and results below are recorded in workflow histories: their JSON
// shapes are fixed. Each mirrors a release type field for field, so a change to
// one side without the other does not compile.

// CreateReleaseInput names the release a run is about to make.
type CreateReleaseInput struct {
	Project    string           `json:"project"`
	Workspace  string           `json:"workspace"`
	Stack      string           `json:"stack,omitempty"`
	Operation  engine.Operation `json:"operation"`
	SpecHash   string           `json:"specHash,omitempty"` // empty for destroy: the desired spec is empty
	RollbackOf int              `json:"rollbackOf,omitempty"`
	Reason     string           `json:"reason,omitempty"`
	// Label names the release (engine.ReleaseLabel).
	Label      engine.ReleaseLabel `json:"label,omitzero"`
	WorkflowID string              `json:"workflowID"`
	RunID      string              `json:"runID"`
	// StartedBy is who started the run, as the run recorded them.
	StartedBy *engine.Actor `json:"startedBy,omitempty"`
	// Chart is the Helm chart the spec was rendered from, if it was.
	Chart *engine.ChartSource `json:"chart,omitempty"`
	// Surgery is what a forget or move release changes in the record.
	Surgery *engine.Surgery `json:"surgery,omitempty"`
	// Target narrows the run to some resources: the release is partial.
	Target *engine.Targeting `json:"target,omitempty"`
	// Git is the git source commit the spec was generated from, if it was.
	Git *engine.GitOrigin `json:"git,omitempty"`
}

// ReleaseInfo is what a run needs to know about its release.
type ReleaseInfo struct {
	Key      backend.ReleaseKey `json:"key"`
	SpecHash string             `json:"specHash"`
	// PriorRevision is the release whose state the run starts from (0: none).
	PriorRevision int `json:"priorRevision"`
	// Approval is the workspace's approval policy, read from the backend
	// when the release was made (zero in histories older than it).
	Approval engine.ApprovalPolicy `json:"approval,omitzero"`
	// Policies: plan policies apply to the run (the operator's, or the
	// workspace's, when the release was made); without any, no check runs.
	Policies bool `json:"policies,omitempty"`
	// Surgery is the change list of a forget or move release, for its
	// approval.
	Surgery []engine.Change `json:"surgery,omitempty"`
	// PreviewRecorded: the release is this run's, made before its workflow
	// task was lost, and the run kept its previews before it changed
	// anything; it goes on from them (RecordedPreview).
	PreviewRecorded bool `json:"previewRecorded,omitempty"`
}

// SurgeryInput names the forget or move release whose records to write.
type SurgeryInput struct {
	Key backend.ReleaseKey `json:"key"`
}

// SetPhaseInput moves a running release to another non-final phase.
type SetPhaseInput struct {
	Key   backend.ReleaseKey `json:"key"`
	Phase engine.Phase       `json:"phase"`
	// People are who the run recorded so far; Audit the entries of what
	// they did, appended to the audit log (again on a retry: kept once).
	People engine.People        `json:"people,omitzero"`
	Audit  []backend.AuditEntry `json:"audit,omitempty"`
	// Preview, when set, is kept first (release.Manager.RecordPreview): the
	// run's previews, taken in the workflow task that goes on to change
	// things.
	Preview *backend.RecordedPreview `json:"preview,omitempty"`
}

// RecordedPreviewInput names the release whose kept previews to read.
type RecordedPreviewInput struct {
	Key backend.ReleaseKey `json:"key"`
}

// FinishInput ends a release.
type FinishInput struct {
	Key          backend.ReleaseKey   `json:"key"`
	Phase        engine.Phase         `json:"phase"`
	Error        string               `json:"error,omitempty"`
	Compensation *engine.Compensation `json:"compensation,omitempty"`
	// People and Audit, as in SetPhaseInput.
	People engine.People        `json:"people,omitzero"`
	Audit  []backend.AuditEntry `json:"audit,omitempty"`
	// Hooks are the hooks the run ran (RunHooks), recorded on the release.
	Hooks []engine.HookRun `json:"hooks,omitempty"`
}

// FinishResult summarises the recorded release.
type FinishResult struct {
	Resources int `json:"resources"`
}

// LatestFinalInput names a project+workspace.
type LatestFinalInput struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
}

// PlanInput asks for the graph a run walks.
type PlanInput struct {
	Project       string `json:"project"`
	Workspace     string `json:"workspace"`
	SpecHash      string `json:"specHash"`
	PriorRevision int    `json:"priorRevision"`
	// Targets are the run's --target addresses, one per line
	// (release.JoinTargets); TargetDependents keeps their dependents too.
	Targets          string `json:"targets,omitempty"`
	TargetDependents bool   `json:"targetDependents,omitempty"`
	// AllowProtectedDelete: an admin allowed deleting protected resources.
	AllowProtectedDelete bool `json:"allowProtectedDelete,omitempty"`
}

// Plan is the DAG of a run, by index so it stays small in workflow history:
// Nodes[i].Deps are indexes of nodes that must finish before node i starts.
type Plan struct {
	Nodes []PlanNode `json:"nodes"`
}

// PlanNode is one resource to apply, or (Delete) to remove because it is recorded
// in the prior state but no longer desired.
type PlanNode struct {
	ID string `json:"id"`
	// Type is the resource's type: how long its steps may take depends on it.
	Type engine.Type `json:"type,omitempty"`
	Deps []int32     `json:"deps,omitempty"`
	// Refs are the nodes whose live attributes this one references ($kumo_path);
	// they are among Deps. When one of them changes, so may this node's values.
	Refs []int32 `json:"refs,omitempty"`
	// Applied are those of Deps that need only be applied before this node
	// starts, not healthy (engine.ExtAfterApplied); the node still finishes
	// only once healthy.
	Applied []int32 `json:"applied,omitempty"`
	Delete  bool    `json:"delete,omitempty"`
}

// NodeInput names one resource of a run.
type NodeInput struct {
	// Key is the run's release; a zero Revision means a preview with no release.
	Key           backend.ReleaseKey `json:"key"`
	SpecHash      string             `json:"specHash"`
	PriorRevision int                `json:"priorRevision"`
	ID            string             `json:"id"`
	// Delete: the resource is in the prior state but no longer desired.
	Delete   bool                    `json:"delete,omitempty"`
	Settings runspec.RuntimeSettings `json:"settings"`
	// Wait and Timeout are the run's wait policy (engine.WaitPolicyOf).
	Wait    string        `json:"wait,omitempty"`
	Timeout time.Duration `json:"timeout,omitempty"`
	// AllowProtectedDelete: an admin allowed deleting protected resources.
	AllowProtectedDelete bool `json:"allowProtectedDelete,omitempty"`
}

// ApplyResult says whether an applied node must still wait for its resource's
// health (WaitResource), and for how long at most.
type ApplyResult struct {
	Wait    bool          `json:"wait,omitempty"`
	Timeout time.Duration `json:"timeout,omitempty"`
	Health  health.Result `json:"health"`
}

// WaitResult is the health a wait ended with, and the changes seen on the way
// (first health seen first).
type WaitResult struct {
	Health      health.Result   `json:"health"`
	Transitions []health.Result `json:"transitions,omitempty"`
}

// CompensateInput names one node of a failed apply to undo, and what the apply
// did to it.
type CompensateInput struct {
	NodeInput
	Action engine.Action `json:"action"`
}

// PlanPageInput asks for the nodes of a plan from Offset on (PlanPage).
type PlanPageInput struct {
	PlanInput
	Offset int `json:"offset,omitempty"`
}

// PlanPage is one page of a plan: its nodes from the page's offset on, and
// how many nodes the whole plan has.
type PlanPage struct {
	Nodes []PlanNode `json:"nodes"`
	Total int        `json:"total"`
	// Hooks (first page only) is how many hooks the run's spec, or the
	// prior release's, has: none, and the run has no hook step (RunHooks).
	Hooks int `json:"hooks,omitempty"`
}
