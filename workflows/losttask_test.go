package workflows

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
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
	s := newLostTask(t)
	var reached atomic.Bool
	held := make(chan struct{})
	// Before the first worker stops (cleanups run last first): its held
	// apply returns, rejected, and changes nothing.
	t.Cleanup(func() { close(held) })
	wr := s.run(func() {
		s.h.rt.onApply = func(id string) {
			if id == lostTaskRejected && reached.CompareAndSwap(false, true) {
				s.first.kill()
				<-held
			}
		}
	})
	// The lost task kept its previews (phaseSteps), and the next attempt
	// went on from them: its history replays.
	events := history(s.ctx, t, s.next, wr)
	if !slices.Contains(localSummaries(t, events), "kept previews") {
		t.Errorf("the run did not read its kept previews back: local steps %v", localSummaries(t, events))
	}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []interceptor.WorkerInterceptor{Interceptor}})
	if err != nil {
		t.Fatal(err)
	}
	Register(r)
	if err := r.ReplayWorkflowHistory(nil, &historypb.History{Events: events}); err != nil {
		t.Errorf("replay of the run that read its kept previews: %v", err)
	}
}

// TestLostWorkflowTaskAfterTheFinish: the worker dies once it has finished
// the failed apply's release, before that task completes. The next worker
// must not apply and undo it all again: the release, final, would not
// change, and would record objects' versions no longer live. What keeps the
// walk from running again is that the undo steps are ordinary activities:
// the task that starts them completes first, recording the walk, so the
// lost task holds only the finish, which changes nothing the second time.
func TestLostWorkflowTaskAfterTheFinish(t *testing.T) {
	s := newLostTask(t)
	s.first.killBefore = func(method string) bool {
		return strings.HasSuffix(method, "/RespondWorkflowTaskCompleted") && s.finished()
	}
	s.run(func() {
		s.h.rt.onApply = func(id string) {
			if s.finished() {
				t.Errorf("%s applied after revision 2 was finished", id)
			}
		}
	})
}

// lostTaskRejected is the ConfigMap whose apply of version 2 fails.
const lostTaskRejected = "v1:ConfigMap:ns:c"

// lostTask is an apply of version 2 of a, b and c (c after a and b), which
// fails at c and undoes a and b, run by a worker that dies on the way and
// finished by another.
type lostTask struct {
	t     *testing.T
	ctx   context.Context
	h     *harness
	srv   *embedded.Server
	first *mortalWorker
	// next is the client of the worker that takes over.
	next client.Client
}

func newLostTask(t *testing.T) *lostTask {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	s := &lostTask{t: t, ctx: ctx, h: newHarness(t), srv: startServerWith(t, embedded.Options{})}
	s.first = startMortalWorker(t, s.srv, s.h.acts)
	return s
}

func (s *lostTask) spec(version string) string {
	s.t.Helper()
	c := func(name string, deps ...string) engine.Resource {
		r := cm(name, deps...)
		r.Attributes["data"] = map[string]any{"version": version}
		return r
	}
	hash, err := s.h.backend.PutSpec(s.ctx, &engine.Spec{Resources: []engine.Resource{c("a"), c("b"), c("c", "v1:ConfigMap:ns:a", "v1:ConfigMap:ns:b")}})
	if err != nil {
		s.t.Fatal(err)
	}
	return hash
}

// finished reports whether revision 2 is final.
func (s *lostTask) finished() bool {
	rel, err := s.h.backend.GetRelease(context.Background(), "p", "w", 2)
	return err == nil && rel.Phase.Final()
}

// run applies version 1, calls arm, applies version 2 on the first worker
// until it is killed, then starts the next worker and checks the run's end.
func (s *lostTask) run(arm func()) client.WorkflowRun {
	t, ctx := s.t, s.ctx
	t.Helper()
	in := runspec.RunInput{Project: "p", Workspace: "w", SpecHash: s.spec("1"), AutoApprove: true, Parallelism: 4, RollbackOnFailure: true}
	// A short task timeout: the dead worker's task is given to the next one
	// a few seconds after it died.
	opts := client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue, WorkflowTaskTimeout: 3 * time.Second}
	wr, err := s.first.client.ExecuteWorkflow(ctx, opts, runspec.ApplyWorkflow, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runResult(ctx, wr); err != nil {
		t.Fatalf("apply of version 1: %v", err)
	}

	s.h.rt.reject[lostTaskRejected] = true
	arm()
	in.SpecHash = s.spec("2")
	if wr, err = s.first.client.ExecuteWorkflow(ctx, opts, runspec.ApplyWorkflow, in); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !s.first.dead.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !s.first.dead.Load() {
		t.Fatal("the first worker was never killed")
	}
	// The next worker: another process, with activities of its own.
	next, err := client.Dial(client.Options{HostPort: s.srv.Address(), Identity: "next", Logger: quietLogger, ConnectionOptions: ownerConnection(t, s.srv)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(next.Close)
	s.next = next
	startWorkerOn(t, next, activities.New(s.h.backend, s.h.rt, notRunning{}), worker.Options{})

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
	for _, id := range []string{"v1:ConfigMap:ns:a", "v1:ConfigMap:ns:b", lostTaskRejected} {
		r, _ := s.h.rt.Read(ctx, &engine.Resource{ID: id})
		if r == nil {
			t.Errorf("%s is not live", id)
			continue
		}
		if v := r.Attributes["data"].(map[string]any)["version"]; v != "1" {
			t.Errorf("%s is live at version %v, want 1: the failed apply's change stayed", id, v)
		}
	}
	rel, err := s.h.backend.LatestRelease(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	if rel.Revision != 2 || rel.Phase != engine.PhaseFailed {
		t.Errorf("latest release: revision %d %s, want 2 failed", rel.Revision, rel.Phase)
	}
	return wr
}

// mortalWorker is a worker whose connection fails every call once it is
// killed, as a killed process's would, and ends those in flight (its long
// polls): its workflow task never completes, and it takes no task after it
// died. The error is one the SDK does not retry, so the dead worker's task
// ends at its first failed call instead of holding the run's cached
// workflow, which the next worker (in this same process) needs.
type mortalWorker struct {
	client client.Client
	dead   atomic.Bool
	// killBefore, when set, kills the worker instead of making a call it
	// says yes to (by its gRPC method name).
	killBefore func(method string) bool

	mu       sync.Mutex
	calls    int
	inflight map[int]context.CancelFunc
}

var errKilled = status.Error(codes.FailedPrecondition, "worker killed")

func startMortalWorker(t *testing.T, srv *embedded.Server, acts *activities.Activities) *mortalWorker {
	t.Helper()
	w := &mortalWorker{inflight: map[int]context.CancelFunc{}}
	co := ownerConnection(t, srv)
	co.DialOptions = append(co.DialOptions, grpc.WithChainUnaryInterceptor(w.intercept))
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Identity: "first", Logger: quietLogger, ConnectionOptions: co})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	w.client = c
	startWorkerOn(t, c, acts, worker.Options{StickyScheduleToStartTimeout: time.Second})
	return w
}

func (w *mortalWorker) kill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dead.Store(true)
	for _, cancel := range w.inflight {
		cancel()
	}
}

func (w *mortalWorker) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if w.killBefore != nil && !w.dead.Load() && w.killBefore(method) {
		w.kill()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.mu.Lock()
	if w.dead.Load() {
		w.mu.Unlock()
		return errKilled
	}
	w.calls++
	call := w.calls
	w.inflight[call] = cancel
	w.mu.Unlock()
	err := invoker(ctx, method, req, reply, cc, opts...)
	w.mu.Lock()
	delete(w.inflight, call)
	w.mu.Unlock()
	if w.dead.Load() { // answered after the kill: lost with the process
		return errKilled
	}
	return err
}
