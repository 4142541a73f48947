package workflows

import (
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/runspec"
)

// TestSearchAttributeKeysCoverTable: every attribute the servers register has
// a typed key here, of the type they register it with, and no key is extra.
func TestSearchAttributeKeysCoverTable(t *testing.T) {
	keys := []temporal.SearchAttributeKey{
		ProjectAttr, StackAttr, WorkspaceAttr, OperationAttr,
		RevisionAttr, StatusAttr, DriftedAttr, DriftCountAttr, StartedByAttr,
	}
	byName := map[string]temporal.SearchAttributeKey{}
	for _, k := range keys {
		byName[k.GetName()] = k
	}
	if len(byName) != len(runspec.SearchAttributes) {
		t.Errorf("%d typed keys, %d attributes in runspec.SearchAttributes", len(byName), len(runspec.SearchAttributes))
	}
	for _, a := range runspec.SearchAttributes {
		k, ok := byName[a.Name]
		if !ok {
			t.Errorf("search attribute %s has no typed key in workflows", a.Name)
			continue
		}
		if got := k.GetValueType().String(); got != string(a.Type) {
			t.Errorf("search attribute %s: typed key is %s, runspec.SearchAttributes says %s", a.Name, got, a.Type)
		}
	}
}
