package generate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// stack.yaml's moved: entries reach the generated spec; a malformed entry is
// an error naming the file and the field.
func TestStackMovedEntries(t *testing.T) {
	from, to := "hashicorp:aws:aws_db_instance:shop-dev-db", "hashicorp:aws:aws_db_instance:shop-dev-orders"
	stack := writeProject(t, "name: shop\n", webApp)
	write(t, filepath.Join(stack, StackFile), "name: dev\nmoved:\n- {from: "+from+", to: "+to+"}\n")
	spec := mustGenerate(t, stack, nil)
	if len(spec.Moved) != 1 || spec.Moved[0] != (engine.Moved{From: from, To: to}) {
		t.Fatalf("spec.Moved = %+v", spec.Moved)
	}
	if out := marshal(t, spec); !strings.Contains(out, "moved:\n- from: "+from+"\n  to: "+to+"\n") {
		t.Errorf("the spec file lacks the move:\n%s", out)
	}

	write(t, filepath.Join(stack, StackFile), "name: dev\nmoved:\n- {from: "+from+", too: "+to+"}\n")
	if _, err := generateStack(t, stack, nil, nil); err == nil || !strings.Contains(err.Error(), StackFile) || !strings.Contains(err.Error(), "too") {
		t.Errorf("a misspelt field: %v, want an error naming %s and the field", err, StackFile)
	}
	write(t, filepath.Join(stack, StackFile), "name: dev\nmoved:\n- {from: "+from+", to: "+from+"}\n")
	if _, err := generateStack(t, stack, nil, nil); err == nil || !strings.Contains(err.Error(), "the two IDs are the same") {
		t.Errorf("a move onto itself: %v", err)
	}
}
