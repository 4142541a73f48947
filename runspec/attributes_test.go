package runspec

import "testing"

// TestSearchAttributesFitSQLVisibility: kumo temporal setup can register
// every attribute on a cluster with SQL visibility (PostgreSQL), whose
// namespaces hold a fixed number of custom attributes of each type.
func TestSearchAttributesFitSQLVisibility(t *testing.T) {
	used := map[AttributeType]int{}
	for _, a := range SearchAttributes {
		limit, ok := SQLVisibilityColumns[a.Type]
		if !ok {
			t.Errorf("%s: type %s has no SQL visibility column count", a.Name, a.Type)
			continue
		}
		if used[a.Type]++; used[a.Type] > limit {
			t.Errorf("%s: %d %s attributes, SQL visibility holds %d per namespace", a.Name, used[a.Type], a.Type, limit)
		}
	}
	t.Logf("kumo's attributes per type: %v of %v", used, SQLVisibilityColumns)
}
