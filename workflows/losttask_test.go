package workflows

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
)

// TestLostWorkflowTaskKeepsItsPreviews: the worker running an auto-approved
// apply with rollback on failure dies in the walk, before its workflow task
// completes; the next worker goes on from what history records. The
// previews must be in it: previewed again, the ConfigMaps the dead worker
// had applied looked unchanged, so they were neither applied again nor
// undone when the apply then failed, and the release recorded a failed apply
// whose changes stayed live (the crash suite's compensation trials found it).
func TestLostWorkflowTaskKeepsItsPreviews(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newHarness(t)
	srv := startServerWith(t, embedded.Options{})

	// The first worker's connection fails every call once it is dead, as a
	// killed process's would, and ends those in flight (its long polls): its
	// workflow task never completes, and it takes no task after it died. The
	// error is one the SDK does not retry, so the dead worker's task ends at
	// its first failed call instead of holding the run's cached workflow,
	// which the next worker (in this same process) needs.
	var (
		dead     atomic.Bool
		mu       sync.Mutex
		calls    int
		inflight = map[int]context.CancelFunc{}
	)
	killed := status.Error(codes.FailedPrecondition, "worker killed")
	kill := func() {
		mu.Lock()
		defer mu.Unlock()
		dead.Store(true)
		for _, cancel := range inflight {
			cancel()
		}
	}
	cut := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		mu.Lock()
		if dead.Load() {
			mu.Unlock()
			return killed
		}
		calls++
		call := calls
		inflight[call] = cancel
		mu.Unlock()
		err := invoker(ctx, method, req, reply, cc, opts...)
		mu.Lock()
		delete(inflight, call)
		mu.Unlock()
		if dead.Load() { // answered after the kill: lost with the process
			return killed
		}
		return err
	}
	co := ownerConnection(t, srv)
	co.DialOptions = append(co.DialOptions, grpc.WithChainUnaryInterceptor(cut))
	first, err := client.Dial(client.Options{HostPort: srv.Address(), Identity: "first", Logger: quietLogger, ConnectionOptions: co})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.Close)
	startWorkerOn(t, first, h.acts, worker.Options{StickyScheduleToStartTimeout: time.Second})
	// Runs before the first worker stops (cleanups run last first): its
	// held apply returns, rejected, and changes nothing.
	held := make(chan struct{})
	t.Cleanup(func() { close(held) })

	spec := func(version string) *engine.Spec {
		c := func(name string, deps ...string) engine.Resource {
			r := cm(name, deps...)
			r.Attributes["data"] = map[string]any{"version": version}
			return r
		}
		return &engine.Spec{Resources: []engine.Resource{c("a"), c("b"), c("c", "v1:ConfigMap:ns:a", "v1:ConfigMap:ns:b")}}
	}
	hash, err := h.backend.PutSpec(ctx, spec("1"))
	if err != nil {
		t.Fatal(err)
	}
	in := runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true, Parallelism: 4, RollbackOnFailure: true}
	// A short task timeout: the dead worker's task is given to the next one
	// a few seconds after it died.
	opts := client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue, WorkflowTaskTimeout: 3 * time.Second}
	wr, err := first.ExecuteWorkflow(ctx, opts, runspec.ApplyWorkflow, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runResult(ctx, wr); err != nil {
		t.Fatalf("apply of version 1: %v", err)
	}

	// Version 2: a and b apply, then c's apply is rejected. The first worker
	// dies when it starts c's, a and b applied.
	const c = "v1:ConfigMap:ns:c"
	h.rt.reject[c] = true
	var reached atomic.Bool
	h.rt.onApply = func(id string) {
		if id == c && reached.CompareAndSwap(false, true) {
			kill()
			<-held
		}
	}
	if in.SpecHash, err = h.backend.PutSpec(ctx, spec("2")); err != nil {
		t.Fatal(err)
	}
	if wr, err = first.ExecuteWorkflow(ctx, opts, runspec.ApplyWorkflow, in); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !dead.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !dead.Load() {
		t.Fatal("the first worker never applied c")
	}
	// The next worker: another process, with activities of its own.
	next, err := client.Dial(client.Options{HostPort: srv.Address(), Identity: "next", Logger: quietLogger, ConnectionOptions: ownerConnection(t, srv)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(next.Close)
	startWorkerOn(t, next, activities.New(h.backend, h.rt, notRunning{}), worker.Options{})

	res, err := runResult(ctx, next.GetWorkflow(ctx, wr.GetID(), wr.GetRunID()))
	if err == nil || !strings.Contains(err.Error(), "rejected") {
		t.Fatalf("apply of version 2: %v, want c's rejection", err)
	}
	var undone []string
	if res.Compensation != nil {
		undone = slices.Sorted(slices.Values(res.Compensation.Resources))
	}
	if want := []string{"v1:ConfigMap:ns:a", "v1:ConfigMap:ns:b"}; !slices.Equal(undone, want) || res.Compensation == nil || len(res.Compensation.Errors) != 0 {
		t.Errorf("compensation %+v, want %v undone", res.Compensation, want)
	}
	for _, id := range []string{"v1:ConfigMap:ns:a", "v1:ConfigMap:ns:b", c} {
		r, _ := h.rt.Read(ctx, &engine.Resource{ID: id})
		if r == nil {
			t.Errorf("%s is not live", id)
			continue
		}
		if v := r.Attributes["data"].(map[string]any)["version"]; v != "1" {
			t.Errorf("%s is live at version %v, want 1: the failed apply's change stayed", id, v)
		}
	}
	rel, err := h.backend.LatestRelease(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	if rel.Revision != 2 || rel.Phase != engine.PhaseFailed {
		t.Errorf("latest release: revision %d %s, want 2 failed", rel.Revision, rel.Phase)
	}
}
