package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/runspec"
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
	// StartedByAttr is stamped by kumo's frontend on every start.
	StartedByAttr = keywordKey(runspec.AttrStartedBy)
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
