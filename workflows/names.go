package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/runspec"
)

// TaskQueue is where every kumo workflow and activity runs.
const TaskQueue = "kumo"

// Workflow type names, as they appear in the Temporal Web UI.
const (
	GenerateWorkflow = "Generate"
	PreviewWorkflow  = "Preview"
	ApplyWorkflow    = "Apply"
	DestroyWorkflow  = "Destroy"
	RollbackWorkflow = "Rollback"
	DriftWorkflow    = "DriftCheck"
)

// Signal and query names.
const (
	// ApprovalSignal carries an Approval: how runs older than ApproveUpdate
	// (approval.go) took the go-ahead after preview. Kept for them.
	ApprovalSignal = "approval"
	// ProgressQuery returns a Progress.
	ProgressQuery = "progress"
	// CancelSignal carries a Cancel: the reason, sent just before Temporal's
	// cancel request.
	CancelSignal = "cancel"
	// ChangesMemo is the memo field holding a run's ChangeCounts.
	ChangesMemo = "kumoChanges"
)

// Search attributes set on every run, so runs are filterable in the Web UI.
var (
	ProjectAttr   = temporal.NewSearchAttributeKeyKeyword(runspec.AttrProject)
	StackAttr     = temporal.NewSearchAttributeKeyKeyword(runspec.AttrStack)
	WorkspaceAttr = temporal.NewSearchAttributeKeyKeyword(runspec.AttrWorkspace)
	OperationAttr = temporal.NewSearchAttributeKeyKeyword(runspec.AttrOperation)
	RevisionAttr  = temporal.NewSearchAttributeKeyInt64(runspec.AttrRevision)
	// StatusAttr holds a Status, kept current as the run goes.
	StatusAttr = temporal.NewSearchAttributeKeyKeyword(runspec.AttrStatus)
	// DriftedAttr and DriftCountAttr are set by DriftCheck runs.
	DriftedAttr    = temporal.NewSearchAttributeKeyBool(runspec.AttrDrifted)
	DriftCountAttr = temporal.NewSearchAttributeKeyInt64(runspec.AttrDriftCount)
)

// MutatingWorkflowID is the ID of the apply or destroy run of a project+workspace:
// one ID, so Temporal itself refuses a second concurrent run.
func MutatingWorkflowID(project, workspace string) string {
	return fmt.Sprintf("kumo/%s/%s", project, workspace)
}
