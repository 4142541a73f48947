package release

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
)

// TestSurgeryRelease: a forget makes a revision whose spec and state lack the
// forgotten resource, written by RecordSurgery (twice: the same); Begin
// refuses a surgery on another operation, and one with nothing to start from.
func TestSurgeryRelease(t *testing.T) {
	ctx := context.Background()
	m, b := newSurgeryManager(t)
	a, c := surgeryCM("a"), surgeryCM("c")
	if _, err := m.Begin(ctx, BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationForget, WorkflowID: "wf", RunID: "r0",
		Surgery: &engine.Surgery{Forget: []string{a.ID}}}); !errors.Is(err, ErrNoRelease) {
		t.Fatalf("forget without releases: %v, want ErrNoRelease", err)
	}
	h, err := b.PutSpec(ctx, &engine.Spec{Resources: []engine.Resource{a, c}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateRelease(ctx, &engine.Release{Project: "p", Workspace: "w", Revision: 1, Operation: engine.OperationApply, Phase: engine.PhaseSucceeded,
		SpecHash: h, State: &engine.State{Resources: []engine.Resource{a, c}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Begin(ctx, BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationApply, SpecHash: h, WorkflowID: "wf", RunID: "r1",
		Surgery: &engine.Surgery{Forget: []string{a.ID}}}); err == nil || !strings.Contains(err.Error(), "a apply run carries no forget or move") {
		t.Fatalf("an apply with a surgery: %v", err)
	}
	in := BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationForget, WorkflowID: "wf", RunID: "r2", Surgery: &engine.Surgery{Forget: []string{a.ID}}}
	info, err := m.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Surgery) != 1 || info.Surgery[0].Action != engine.Forget {
		t.Fatalf("changes = %+v", info.Surgery)
	}
	again, err := m.Begin(ctx, in)
	if err != nil || again.Key != info.Key || len(again.Surgery) != 1 {
		t.Fatalf("Begin retried: %+v %v, want the same release and changes", again, err)
	}
	for range 2 {
		if n, err := m.RecordSurgery(ctx, info.Key); err != nil || n != 1 {
			t.Fatalf("RecordSurgery = %d, %v", n, err)
		}
	}
	if _, err := m.Finish(ctx, FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
		t.Fatal(err)
	}
	rel, err := b.GetRelease(ctx, "p", "w", 2)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Operation != engine.OperationForget || len(rel.State.Resources) != 1 || rel.State.Resources[0].ID != c.ID ||
		len(rel.Spec.Resources) != 1 || rel.Spec.Resources[0].ID != c.ID || rel.Surgery == nil {
		t.Errorf("revision 2 = %s, state %+v, spec %+v", rel.Operation, rel.State.Resources, rel.Spec.Resources)
	}
	if _, err := m.RecordSurgery(ctx, info.Key); !errors.Is(err, ErrFinal) {
		t.Errorf("RecordSurgery on a finished release: %v, want ErrFinal", err)
	}
}

// newSurgeryManager is a Manager on a local backend; surgery touches no
// runtime, and no release is left unfinished by another run.
func newSurgeryManager(t *testing.T) (*Manager, backend.Backend) {
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return New(b, nil, nil), b
}

func surgeryCM(name string) engine.Resource {
	return engine.Resource{ID: "v1:ConfigMap:ns:" + name, Type: engine.Kubernetes,
		Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns"}}}
}
