package activities

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

type memRuntimes struct{ *memory.Runtime }

func (m memRuntimes) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return m.Runtime, nil
}

// withMemory returns activities over a fresh local backend and in-memory runtime.
func withMemory(t *testing.T) (*Activities, *local.Backend, memRuntimes) {
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := memRuntimes{memory.New()}
	return New(b, rt, nil), b, rt
}

// batchRelease begins a release of four ConfigMaps a, b, c, d and returns
// their IDs and the node input they share.
func batchRelease(t *testing.T, b *local.Backend, rt memRuntimes) ([]string, NodeInput) {
	t.Helper()
	ctx := context.Background()
	var spec engine.Spec
	var ids []string
	for _, n := range []string{"a", "b", "c", "d"} {
		id := "v1:ConfigMap:ns:" + n
		ids = append(ids, id)
		spec.Resources = append(spec.Resources, engine.Resource{ID: id, Type: engine.Kubernetes,
			Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": n, "namespace": "ns"}}})
	}
	hash, err := b.PutSpec(ctx, &spec)
	if err != nil {
		t.Fatal(err)
	}
	info, err := release.New(b, rt, nil).Begin(ctx, release.BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationApply, SpecHash: hash, WorkflowID: "kumo/p/w", RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	return ids, NodeInput{Key: info.Key, SpecHash: hash}
}

// TestApplyResourcesResumesAfterItsHeartbeat: a retried batch reads what the
// failed attempt heartbeated as recorded and applies only the rest; a batch
// whose resource fails for good says, in its error's details, what it did
// before.
func TestApplyResourcesResumesAfterItsHeartbeat(t *testing.T) {
	a, b, rt := withMemory(t)
	ids, node := batchRelease(t, b, rt)
	in := BatchInput{Node: node, IDs: ids[:3]}

	var res BatchResult
	if err := runActivity(a, a.ApplyResources, in, BatchResult{Outcomes: []Outcome{{ID: ids[0]}, {ID: ids[1]}}}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Outcomes) != 3 || res.Outcomes[2].ID != ids[2] {
		t.Fatalf("outcomes %+v, want a, b (from the heartbeat) and c", res.Outcomes)
	}
	if got := rt.Applied(); !slices.Equal(got, ids[2:3]) {
		t.Fatalf("applied %v, want only c", got)
	}

	rt.Reject(ids[3])
	in.IDs = ids[2:]
	err := runActivity(a, a.ApplyResources, in, nil, nil)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrTypeNode {
		t.Fatalf("batch with a rejected resource: %v, want a non-retryable %s", err, ErrTypeNode)
	}
	var done BatchResult
	if err := app.Details(&done); err != nil || len(done.Outcomes) != 1 || done.Outcomes[0].ID != ids[2] {
		t.Fatalf("details %+v (%v), want c done before d failed", done, err)
	}
}
