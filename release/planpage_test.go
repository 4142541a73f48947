package release_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// TestPlanPage: the pages of a plan, taken one after another, are the plan
// PlanGraph makes, each within the byte bound; a fresh Manager (another
// worker) hands out the same pages; an offset past the plan is invalid.
func TestPlanPage(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, _ := withRuntime(b)
		rs := []engine.Resource{ns("a")}
		for i := range 300 {
			rs = append(rs, cm(fmt.Sprintf("cm-%03d", i), "v"))
		}
		in := release.PlanInput{Project: "p", Workspace: "w", SpecHash: putSpec(t, b, rs...)}
		whole, err := m.PlanGraph(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		const maxBytes = 4 << 10
		var got []release.PlanNode
		pages := 0
		for len(got) < len(whole.Nodes) {
			mm := m
			if pages%2 == 1 {
				mm, _ = withRuntime(b) // another worker, without the plan made
			}
			page, total, err := mm.PlanPage(ctx, in, len(got), maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			if total != len(whole.Nodes) || len(page) == 0 {
				t.Fatalf("page %d: %d nodes of %d, want some of %d", pages, len(page), total, len(whole.Nodes))
			}
			if data, _ := json.Marshal(page); len(data) > maxBytes {
				t.Fatalf("page %d is %d bytes, over %d", pages, len(data), maxBytes)
			}
			got = append(got, page...)
			pages++
		}
		if pages < 3 || !reflect.DeepEqual(got, whole.Nodes) {
			t.Fatalf("%d pages gave %d nodes, want the plan's %d in order over several pages", pages, len(got), len(whole.Nodes))
		}
		if _, _, err := m.PlanPage(ctx, in, len(whole.Nodes), maxBytes); !errors.Is(err, release.ErrInvalid) {
			t.Fatalf("page past the plan: %v, want ErrInvalid", err)
		}
	})
}
