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

// priorCountingBackend counts the reads of one revision.
type priorCountingBackend struct {
	backend.Backend
	revision int
	reads    int
}

func (c *priorCountingBackend) GetRelease(ctx context.Context, project, workspace string, revision int) (*engine.Release, error) {
	if revision == c.revision {
		c.reads++
	}
	return c.Backend.GetRelease(ctx, project, workspace, revision)
}

func (c *priorCountingBackend) LatestRelease(ctx context.Context, project, workspace string) (*engine.Release, error) {
	r, err := c.Backend.LatestRelease(ctx, project, workspace)
	if err == nil && r.Revision == c.revision {
		c.reads++
	}
	return r, err
}

// TestARunReadsItsPriorReleaseOnce: the release a run starts from is read
// (its whole state decoded) once, when the run's release is created; the
// plan and the finish take that copy.
func TestARunReadsItsPriorReleaseOnce(t *testing.T) {
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	spec := &engine.Spec{Resources: []engine.Resource{{ID: "v1:ConfigMap:default:a", Type: engine.Kubernetes,
		Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "default"}}}}}
	hash, err := b.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	first := &engine.Release{Project: "p", Workspace: "w", Revision: 1, Operation: engine.OperationApply, Phase: engine.PhaseSucceeded,
		SpecHash: hash, Spec: spec, State: &engine.State{Resources: spec.Resources}}
	if err := b.CreateRelease(ctx, first); err != nil {
		t.Fatal(err)
	}
	cb := &priorCountingBackend{Backend: b, revision: 1}
	m := New(cb, nil, nil)
	info, err := m.Begin(ctx, BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationApply, SpecHash: hash, WorkflowID: "wf", RunID: "run"})
	if err != nil {
		t.Fatal(err)
	}
	if info.PriorRevision != 1 {
		t.Fatalf("prior revision %d, want 1", info.PriorRevision)
	}
	if _, err := m.PlanGraph(ctx, PlanInput{Project: "p", Workspace: "w", SpecHash: hash, PriorRevision: info.PriorRevision}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Finish(ctx, FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
		t.Fatal(err)
	}
	if cb.reads != 1 {
		t.Errorf("the prior release was read %d times by one run's create, plan and finish, want 1", cb.reads)
	}
}
