package workflows

import "github.com/kumoproj/kumo/runspec"

// The run contract moved to runspec. These names stand for it only until the
// package's own references say runspec (the next change, made mechanically).

type (
	RunInput        = runspec.RunInput
	Approval        = runspec.Approval
	Cancel          = runspec.Cancel
	Result          = runspec.Result
	Stage           = runspec.Stage
	NodeStatus      = runspec.NodeStatus
	Progress        = runspec.Progress
	Node            = runspec.Node
	Status          = runspec.Status
	ChangeCounts    = runspec.ChangeCounts
	ApprovalRequest = runspec.ApprovalRequest
	ApprovalAnswer  = runspec.ApprovalAnswer
	ApprovalState   = runspec.ApprovalState
	ProgressRequest = runspec.ProgressRequest
	ProgressPage    = runspec.ProgressPage
)

const (
	StageGenerating        = runspec.StageGenerating
	StagePlanning          = runspec.StagePlanning
	StagePreview           = runspec.StagePreview
	StageApproval          = runspec.StageApproval
	StageApplying          = runspec.StageApplying
	StageDestroying        = runspec.StageDestroying
	StageCompensating      = runspec.StageCompensating
	StageDone              = runspec.StageDone
	NodePending            = runspec.NodePending
	NodeRunning            = runspec.NodeRunning
	NodeSucceeded          = runspec.NodeSucceeded
	NodeUnchanged          = runspec.NodeUnchanged
	NodeFailed             = runspec.NodeFailed
	NodeSkipped            = runspec.NodeSkipped
	NodeCompensated        = runspec.NodeCompensated
	StatusRunning          = runspec.StatusRunning
	StatusAwaitingApproval = runspec.StatusAwaitingApproval
	StatusApplying         = runspec.StatusApplying
	StatusDestroying       = runspec.StatusDestroying
	StatusCompensating     = runspec.StatusCompensating
	StatusSucceeded        = runspec.StatusSucceeded
	StatusFailed           = runspec.StatusFailed
	StatusCancelled        = runspec.StatusCancelled
	StatusDriftStuck       = runspec.StatusDriftStuck
	TaskQueue              = runspec.TaskQueue
	GenerateWorkflow       = runspec.GenerateWorkflow
	PreviewWorkflow        = runspec.PreviewWorkflow
	ApplyWorkflow          = runspec.ApplyWorkflow
	DestroyWorkflow        = runspec.DestroyWorkflow
	RollbackWorkflow       = runspec.RollbackWorkflow
	DriftWorkflow          = runspec.DriftWorkflow
	RemediateWorkflow      = runspec.RemediateWorkflow
	ApprovalSignal         = runspec.ApprovalSignal
	ApproveUpdate          = runspec.ApproveUpdate
	ProgressQuery          = runspec.ProgressQuery
	ProgressPageQuery      = runspec.ProgressPageQuery
	CancelSignal           = runspec.CancelSignal
	ChangesMemo            = runspec.ChangesMemo
	DriftSchedulePrefix    = runspec.DriftSchedulePrefix
)

var (
	CountChanges       = runspec.CountChanges
	MutatingWorkflowID = runspec.MutatingWorkflowID
	DriftWorkflowID    = runspec.DriftWorkflowID
	DriftScheduleID    = runspec.DriftScheduleID
)
