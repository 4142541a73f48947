package worker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/codec"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/keyring"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
)

var quiet = sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

// TestWorkerWithKeyRefusesPlainPayloads: a kumo worker whose data converter
// has a codec key, on a real embedded server; a raw SDK client without the key
// starts an Apply with a plain json/plain input (auto-approved), and a
// workflow of its own schedules kumo's CreateRelease on queue kumo with a plain
// input. The Apply fails on its input before scheduling anything, the
// activity fails before running, and the backend holds no release.
func TestWorkerWithKeyRefusesPlainPayloads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Temporal")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	keys, err := keyring.LoadOrCreate(filepath.Join(t.TempDir(), keyring.FileName))
	if err != nil {
		t.Fatal(err)
	}
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b.SetSealer(keys)
	// Both dial as the home's owner: the frontend lets only it in, and what
	// is under test is the worker's codec, not who may start a run.
	conn, err := srv.ConnectionOptions()
	if err != nil {
		t.Fatal(err)
	}
	kumo, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quiet, DataConverter: codec.DataConverter(keys), ConnectionOptions: conn})
	if err != nil {
		t.Fatal(err)
	}
	defer kumo.Close()
	w := New(kumo, b)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	raw, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quiet, ConnectionOptions: conn})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	hash, err := b.PutSpec(ctx, &engine.Spec{Resources: []engine.Resource{{ID: "v1:Namespace:victim", Type: "Kubernetes",
		Attributes: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "victim"}}}}})
	if err != nil {
		t.Fatal(err)
	}

	id := runspec.MutatingWorkflowID("shop", "dev")
	run, err := raw.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow,
		runspec.RunInput{Project: "shop", Workspace: "dev", SpecHash: hash, AutoApprove: true})
	if err != nil {
		t.Fatal(err)
	}
	err = run.Get(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "not encrypted") {
		t.Fatalf("apply with a plain input: %v, want it refused as not encrypted", err)
	}
	for it := raw.GetWorkflowHistory(ctx, id, run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT); it.HasNext(); {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED || ev.GetEventType() == enumspb.EVENT_TYPE_TIMER_STARTED {
			t.Errorf("the refused apply went on: %s", ev.GetEventType())
		}
	}

	// A workflow of the raw client's own, on its own queue, asks kumo's
	// worker to create a release. The frontend lets nobody start a foreign
	// workflow type any more but Temporal's own system worker, whose
	// certificate this test borrows to get past that wall and reach the
	// worker's codec, the second wall.
	sysTLS, err := srv.ClientTLS(srv.PKI().System())
	if err != nil {
		t.Fatal(err)
	}
	sys, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quiet, ConnectionOptions: client.ConnectionOptions{TLS: sysTLS}})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	const rawQueue = "not-kumo"
	rw := sdkworker.New(sys, rawQueue, sdkworker.Options{})
	rw.RegisterWorkflowWithOptions(func(ctx workflow.Context, in activities.CreateReleaseInput) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: runspec.TaskQueue, StartToCloseTimeout: 30 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		return workflow.ExecuteActivity(ctx, activities.CreateReleaseActivity, in).Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "Forge"})
	if err := rw.Start(); err != nil {
		t.Fatal(err)
	}
	defer rw.Stop()
	forge, err := sys.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "forge", TaskQueue: rawQueue}, "Forge",
		activities.CreateReleaseInput{Project: "shop", Workspace: "dev", Operation: engine.OperationApply, SpecHash: hash, WorkflowID: "forge", RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	var actErr *temporal.ActivityError
	if err := forge.Get(ctx, nil); !errors.As(err, &actErr) || !strings.Contains(err.Error(), "not encrypted") {
		t.Fatalf("CreateRelease with a plain input: %v, want the activity refused as not encrypted", err)
	}

	if rels, err := b.ListReleases(ctx, "shop", "dev"); err != nil || len(rels) != 0 {
		t.Errorf("releases after the refused runs: %d, %v; want none", len(rels), err)
	}
}
