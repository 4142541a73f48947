package release

import (
	"context"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
)

// countingBackend counts workspace reads.
type countingBackend struct {
	backend.Backend
	reads int
}

func (c *countingBackend) GetWorkspace(ctx context.Context, name string) (*engine.Workspace, error) {
	c.reads++
	return c.Backend.GetWorkspace(ctx, name)
}

// TestStepReadsTheWorkspaceOnce: within one step over many resources the
// stored workspace is read once; the next step reads it afresh and sees what
// changed.
func TestStepReadsTheWorkspaceOnce(t *testing.T) {
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := b.CreateWorkspace(ctx, &engine.Workspace{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	cb := &countingBackend{Backend: b}
	m := New(cb, nil, nil)
	step := oneStep(ctx)
	for range 50 {
		if _, err := m.storedWorkspace(step, "dev"); err != nil {
			t.Fatal(err)
		}
	}
	if cb.reads != 1 {
		t.Errorf("one step read the workspace %d times, want 1", cb.reads)
	}
	ws, _ := b.GetWorkspace(ctx, "dev")
	ws.Runtimes.Kubernetes.AllowExecPlugins = true
	if err := b.PutWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	next, err := m.storedWorkspace(oneStep(ctx), "dev")
	if err != nil || !next.Runtimes.Kubernetes.AllowExecPlugins || cb.reads != 2 {
		t.Errorf("the next step: %+v, %v, %d reads; want the change, read afresh", next, err, cb.reads)
	}
	if _, err := m.storedWorkspace(ctx, "dev"); err != nil || cb.reads != 3 {
		t.Errorf("outside a step: %v, %d reads; want a read each time", err, cb.reads)
	}
}
