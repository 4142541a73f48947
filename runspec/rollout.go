package runspec

import (
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/rollout"
)

// Rollouts: one Rollout workflow per rollout, whose children are ordinary
// Apply runs (one per workspace, each with its own ID, lock, release,
// approvals and policies) and, on undo, Rollback runs.
const (
	// RolloutWorkflow is the workflow type of a rollout.
	RolloutWorkflow = "Rollout"
	// RolloutStatusQuery answers a RolloutStatus.
	RolloutStatusQuery = "rollout-status"
	// RolloutControlUpdate pauses, resumes or aborts a rollout
	// (RolloutControl); it takes the cancel right on every workspace of the
	// rollout.
	RolloutControlUpdate = "rollout-control"
	// RolloutApproveUpdate approves the wave waiting for approval
	// (RolloutControl.Wave); it takes the approve right on every workspace
	// of that wave.
	RolloutApproveUpdate = "rollout-approve"
	// RolloutPrefix starts every rollout's workflow ID.
	RolloutPrefix = "kumo-rollout/"
)

// RolloutWorkflowID is the ID of rollout name of project: one ID, so a
// second rollout of the same name is refused while the first runs.
func RolloutWorkflowID(project, name string) string {
	return RolloutPrefix + project + "/" + name
}

// RolloutScopeHeader is the Temporal header of a rollout's start and of the
// updates sent to it that names the workspaces the request is for. The
// client sends the workspaces (a RolloutScope without roles); kumo's
// frontend decides the request's right on each (apply and rollback for a
// start, cancel for pause/resume/abort, approve for an approval), refuses
// the whole request when one is denied, and replaces the header with the
// roles it found and Verified set. A rollout starts a child only for a
// workspace its start's scope holds with the deployer role, and takes a
// control or an approval only when the update's scope covers the workspaces
// it acts on. Plain JSON ("json/plain"), like SubjectHeader.
const RolloutScopeHeader = "kumo-rollout-scope"

// RolloutScope is RolloutScopeHeader's value.
type RolloutScope struct {
	// Workspaces maps each workspace to the roles the subject holds on it
	// (project/workspace of the rollout's project), as the frontend found.
	Workspaces map[string][]string `json:"workspaces"`
	Verified   bool                `json:"verified,omitempty"`
}

// RolloutInput starts a Rollout.
type RolloutInput struct {
	Project string       `json:"project"`
	Stack   string       `json:"stack"`
	Plan    rollout.Plan `json:"plan"`
	// Source is the stack every child generates its spec from, for its own
	// workspace: a directory or a git source's commit.
	Source RolloutSource `json:"source"`
	// Settings are each workspace's runtime settings, by workspace.
	Settings map[string]RuntimeSettings `json:"settings"`
	// Parallelism, AutoApprove, ApprovalTimeout, Wait and Timeout are
	// passed to every child apply (RunInput); a child still waits for the
	// approvals its workspace's policies require.
	Parallelism     int           `json:"parallelism,omitempty"`
	AutoApprove     bool          `json:"autoApprove,omitempty"`
	ApprovalTimeout time.Duration `json:"approvalTimeout,omitempty"`
	Wait            string        `json:"wait,omitempty"`
	Timeout         time.Duration `json:"timeout,omitempty"`
	StartedBy       string        `json:"startedBy,omitempty"`
	// SourceCommit is the stack checkout's commit, recorded on every release.
	SourceCommit string `json:"sourceCommit,omitempty"`
}

// RolloutSource is where the children's stack comes from: a directory, or
// one commit of a git source, resolved once when the rollout starts so that
// every child deploys the same commit.
type RolloutSource struct {
	// StackDir is the absolute stack directory the worker reads.
	StackDir string `json:"stackDir,omitempty"`
	// Git is the git source and commit every child generates from (the
	// worker reads the source's record from its backend by name).
	Git              *engine.GitOrigin `json:"git,omitempty"`
	GeneratorTimeout time.Duration     `json:"generatorTimeout,omitempty"`
}

// RolloutControl is the argument of RolloutControlUpdate and
// RolloutApproveUpdate.
type RolloutControl struct {
	// Action is pause, resume or abort (RolloutControlUpdate), or approve
	// (RolloutApproveUpdate).
	Action string `json:"action"`
	// Wave is the wave an approval is for: it must be the one waiting.
	Wave   string `json:"wave,omitempty"`
	Reason string `json:"reason,omitempty"`
	// By is the client's name for whoever sends it, recorded unverified
	// only when the update carries no SubjectHeader.
	By string `json:"by,omitempty"`
}

// Rollout control actions.
const (
	RolloutPause   = "pause"
	RolloutResume  = "resume"
	RolloutAbort   = "abort"
	RolloutApprove = "approve"
)

// RolloutState is where a rollout, a wave or a workspace of it is.
type RolloutState string

// The states. A rollout is running, paused, undoing, or ended (succeeded,
// failed, aborted); a wave pending, awaiting-approval, applying, baking,
// passed or failed; a workspace pending, applying, succeeded, failed,
// unhealthy, rolling-back, rolled-back, undo-failed or kept.
const (
	RolloutPending          RolloutState = "pending"
	RolloutRunning          RolloutState = "running"
	RolloutPaused           RolloutState = "paused"
	RolloutAwaitingApproval RolloutState = "awaiting-approval"
	RolloutApplying         RolloutState = "applying"
	RolloutBaking           RolloutState = "baking"
	RolloutPassed           RolloutState = "passed"
	RolloutSucceeded        RolloutState = "succeeded"
	RolloutFailed           RolloutState = "failed"
	RolloutAborted          RolloutState = "aborted"
	RolloutUnhealthy        RolloutState = "unhealthy"
	RolloutUndoing          RolloutState = "undoing"
	RolloutRollingBack      RolloutState = "rolling-back"
	RolloutRolledBack       RolloutState = "rolled-back"
	RolloutUndoFailed       RolloutState = "undo-failed"
	RolloutKept             RolloutState = "kept"
)

// RolloutStatus is what RolloutStatusQuery answers and the workflow returns:
// waves × workspaces with their state and revision.
type RolloutStatus struct {
	Project string       `json:"project"`
	Name    string       `json:"name"`
	Stack   string       `json:"stack"`
	State   RolloutState `json:"state"`
	// Wave is the index of the wave in progress (or the last one reached).
	Wave    int           `json:"wave"`
	Waves   []RolloutWave `json:"waves"`
	Message string        `json:"message,omitempty"`
	// StartedBy and Actions are who started and who paused, resumed,
	// aborted or approved, in order.
	StartedBy engine.Actor    `json:"startedBy"`
	Actions   []RolloutAction `json:"actions,omitempty"`
	Undo      bool            `json:"undoOnFailure,omitempty"`
	// Git is the git source and commit every apply of the rollout deploys.
	Git *engine.GitOrigin `json:"git,omitempty"`
}

// RolloutWave is one wave's status.
type RolloutWave struct {
	Name       string             `json:"name"`
	State      RolloutState       `json:"state"`
	Approval   bool               `json:"approval,omitempty"`
	Bake       time.Duration      `json:"bake,omitempty"`
	Threshold  string             `json:"failureThreshold"`
	Workspaces []RolloutWorkspace `json:"workspaces"`
}

// RolloutWorkspace is one workspace's status in its wave.
type RolloutWorkspace struct {
	Workspace string       `json:"workspace"`
	State     RolloutState `json:"state"`
	// Prior is the latest succeeded revision before the rollout's apply;
	// Revision the one the apply made; UndoRevision the rollback's.
	Prior        int    `json:"prior,omitempty"`
	Revision     int    `json:"revision,omitempty"`
	UndoRevision int    `json:"undoRevision,omitempty"`
	WorkflowID   string `json:"workflowId,omitempty"`
	RunID        string `json:"runId,omitempty"`
	Error        string `json:"error,omitempty"`
}

// RolloutAction is one pause, resume, abort or approval, and who sent it.
type RolloutAction struct {
	Action string       `json:"action"`
	Wave   string       `json:"wave,omitempty"`
	By     engine.Actor `json:"by"`
}
