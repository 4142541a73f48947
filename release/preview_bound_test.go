package release_test

import (
	"fmt"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/release"
)

// A preview result lists a bounded number of field changes per resource (it
// goes into workflow history), the rest counted in a last entry.
func TestPreviewBoundsFieldChanges(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, _ := withRuntime(b)
		a, x := ns("a"), cm("x", "1")
		node := started(t, b, m, a, x)
		for _, id := range []string{a.ID, x.ID} {
			if _, err := m.Apply(ctx, node(id)); err != nil {
				t.Fatal(err)
			}
		}
		many := map[string]any{}
		for i := range 1000 {
			many[fmt.Sprintf("k%04d", i)] = "v"
		}
		x2 := cm("x", "1")
		x2.Attributes["data"] = many
		info, err := m.Begin(ctx, begin("p", "w", "run-2", putSpec(t, b, a, x2)))
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := m.Preview(ctx, release.Node{Key: info.Key, SpecHash: info.SpecHash, PriorRevision: info.PriorRevision, ID: x.ID})
		if err != nil {
			t.Fatal(err)
		}
		// 1000 keys added, v removed: 1001 changes, 99 listed and a count of 902.
		if len(c.Fields) != 100 || c.Fields[99].Path != "(902 more fields change)" || c.Fields[0].Path != `data.k0000` {
			t.Fatalf("fields: %d, first %+v, last %+v", len(c.Fields), c.Fields[0], c.Fields[len(c.Fields)-1])
		}
	})
}
