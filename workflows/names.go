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

// Search attributes set on every run, so runs are filterable in the Web UI:
// the typed keys of runspec.SearchAttributes.
var (
	ProjectAttr   = keywordKey(runspec.AttrProject)
	StackAttr     = keywordKey(runspec.AttrStack)
	WorkspaceAttr = keywordKey(runspec.AttrWorkspace)
	OperationAttr = keywordKey(runspec.AttrOperation)
	RevisionAttr  = intKey(runspec.AttrRevision)
	// StatusAttr holds a Status, kept current as the run goes.
	StatusAttr = keywordKey(runspec.AttrStatus)
	// DriftedAttr and DriftCountAttr are set by DriftCheck runs.
	DriftedAttr    = boolKey(runspec.AttrDrifted)
	DriftCountAttr = intKey(runspec.AttrDriftCount)
)

func keywordKey(name string) temporal.SearchAttributeKeyKeyword {
	mustHaveType(name, runspec.Keyword)
	return temporal.NewSearchAttributeKeyKeyword(name)
}

func intKey(name string) temporal.SearchAttributeKeyInt64 {
	mustHaveType(name, runspec.Int)
	return temporal.NewSearchAttributeKeyInt64(name)
}

func boolKey(name string) temporal.SearchAttributeKeyBool {
	mustHaveType(name, runspec.Bool)
	return temporal.NewSearchAttributeKeyBool(name)
}

// mustHaveType panics, as the package loads, when the table that the servers
// register disagrees with a key: the run would otherwise fail at its first
// upsert, on a server that has no such attribute of that type.
func mustHaveType(name string, want runspec.AttributeType) {
	if a, ok := runspec.LookupSearchAttribute(name); !ok || a.Type != want {
		panic(fmt.Sprintf("workflows: search attribute %s is not a %s in runspec.SearchAttributes", name, want))
	}
}

// MutatingWorkflowID is the ID of the apply or destroy run of a project+workspace:
// one ID, so Temporal itself refuses a second concurrent run.
func MutatingWorkflowID(project, workspace string) string {
	return fmt.Sprintf("kumo/%s/%s", project, workspace)
}
