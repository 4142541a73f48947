package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
)

// hangingRuntime reads like fakeRuntime but never returns from a Read, as a
// worker that died in the middle of a check: it neither answers nor heartbeats.
type hangingRuntime struct {
	*fakeRuntime
	once    sync.Once
	entered chan struct{}
}

func (h *hangingRuntime) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return h, nil
}

func (h *hangingRuntime) Read(context.Context, *engine.Resource) (*engine.Resource, error) {
	h.once.Do(func() { close(h.entered) })
	select {} // the process is gone: nothing more comes from it
}

// TestDriftCheckResumesAfterAWorkerDies: a worker that dies in the middle of
// a check (its connection gone, its read never answered) stops heartbeating;
// the check's activity is retried on another worker once the heartbeat
// timeout passes, and the check ends with its report.
func TestDriftCheckResumesAfterAWorkerDies(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a heartbeat timeout")
	}
	h := newHarness(t)
	a := cm("a")
	a.Attributes["data"] = map[string]any{"k": "v"}
	recordRelease(t, h, a)
	h.rt.objects[a.ID]["data"] = map[string]any{"k": "changed"}
	ctx := context.Background()
	srv, err := embedded.Start(ctx, embedded.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	dial := func() client.Client {
		tc, err := client.Dial(client.Options{HostPort: srv.Address(), Logger: quietLogger, ConnectionOptions: ownerConnection(t, srv)})
		if err != nil {
			t.Fatal(err)
		}
		return tc
	}
	start := func(tc client.Client, rt interface {
		runtime.Runtime
		For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error)
	}) worker.Worker {
		w := worker.New(tc, runspec.TaskQueue, worker.Options{WorkerStopTimeout: time.Millisecond})
		Register(w)
		activities.Register(w, activities.New(h.backend, rt, notRunning{}))
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		return w
	}
	hanging := &hangingRuntime{fakeRuntime: h.rt, entered: make(chan struct{})}
	dying := dial()
	dead := start(dying, hanging)

	tc := dial()
	defer tc.Close()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kumo-drift/p/w/resume", TaskQueue: runspec.TaskQueue}, runspec.DriftWorkflow, runspec.DriftInput{Project: "p", Workspace: "w"})
	if err != nil {
		t.Fatal(err)
	}
	<-hanging.entered
	dead.Stop()
	dying.Close()
	defer start(tc, h.rt).Stop()

	// Bounded, so that a check that never resumes fails here instead of hanging.
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var res runspec.DriftResult
	if err := run.Get(wait, &res); err != nil {
		t.Fatalf("the check did not resume: %v", err)
	}
	if res.Counts.Drifted != 1 {
		t.Fatalf("resumed check: %+v", res)
	}
	if _, err := h.backend.DriftReport(ctx, "p", "w", run.GetRunID()); err != nil {
		t.Errorf("no report from the resumed check: %v", err)
	}
}
