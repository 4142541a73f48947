package embedded

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/internal/quietport"
)

const taskQueue = "embedded-test"

// testWorkflows are this file's workflow types: the frontend lets the
// home's owner (an admin) start them on taskQueue, as it lets nobody start
// any type but kumo's on a server kumo runs.
var testWorkflows = map[string]string{
	"TaggedWorkflow": taskQueue, "WaitWorkflow": taskQueue, "SequentialWorkflow": taskQueue,
	"ParallelWorkflow": taskQueue, "TimerWorkflow": taskQueue,
}

var (
	keyProject   = temporal.NewSearchAttributeKeyKeyword("KumoProject")
	keyStack     = temporal.NewSearchAttributeKeyKeyword("KumoStack")
	keyWorkspace = temporal.NewSearchAttributeKeyKeyword("KumoWorkspace")
	keyOperation = temporal.NewSearchAttributeKeyKeyword("KumoOperation")
	keyRevision  = temporal.NewSearchAttributeKeyInt64("KumoRevision")
	keyDrifted   = temporal.NewSearchAttributeKeyBool("KumoDrifted")
	keyDriftN    = temporal.NewSearchAttributeKeyInt64("KumoDriftCount")
)

// --- workflows and activities used by the tests ---

func Echo(_ context.Context, s string) (string, error) { return s, nil }

func Noop(context.Context) error { return nil }

// TaggedWorkflow sets kumo's search attributes and runs one activity.
func TaggedWorkflow(ctx workflow.Context, project string) (string, error) {
	err := workflow.UpsertTypedSearchAttributes(ctx,
		keyProject.ValueSet(project),
		keyStack.ValueSet("s"),
		keyWorkspace.ValueSet("dev"),
		keyOperation.ValueSet("apply"),
		keyRevision.ValueSet(3),
		keyDrifted.ValueSet(false),
		keyDriftN.ValueSet(0),
	)
	if err != nil {
		return "", err
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err = workflow.ExecuteActivity(ctx, Echo, "hello "+project).Get(ctx, &out)
	return out, err
}

// WaitWorkflow blocks until signal "go" arrives, then echoes its value.
func WaitWorkflow(ctx workflow.Context) (string, error) {
	var v string
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &v)
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, Echo, "got "+v).Get(ctx, &out)
	return out, err
}

// SequentialWorkflow runs n activities one after another.
func SequentialWorkflow(ctx workflow.Context, n int) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	for range n {
		if err := workflow.ExecuteActivity(ctx, Noop).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// TimerWorkflow sleeps 1 ms n times and returns how long each sleep took in
// workflow time (from the task that started the timer to the one it woke).
func TimerWorkflow(ctx workflow.Context, n int) ([]time.Duration, error) {
	took := make([]time.Duration, n)
	for i := range took {
		start := workflow.Now(ctx)
		if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
			return nil, err
		}
		took[i] = workflow.Now(ctx).Sub(start)
	}
	return took, nil
}

// ParallelWorkflow runs n activities at once.
func ParallelWorkflow(ctx workflow.Context, n int) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	fs := make([]workflow.Future, n)
	for i := range fs {
		fs[i] = workflow.ExecuteActivity(ctx, Noop)
	}
	for _, f := range fs {
		if err := f.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// --- helpers ---

func quietSDKLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
}

func newServer(tb testing.TB, dir string) *Server {
	tb.Helper()
	return startServerTuned(tb, dir, fullTuning)
}

func startServerTuned(tb testing.TB, dir string, tune tuning) *Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t0 := time.Now()
	s, err := start(ctx, Options{Dir: dir, adminWorkflows: testWorkflows}, tune)
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Logf("server started at %s in %v", s.Address(), time.Since(t0).Round(time.Millisecond))
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("Stop: %v", err)
		}
	})
	return s
}

// ownerConnection is how the home's owner dials s.
func ownerConnection(tb testing.TB, s *Server) client.ConnectionOptions {
	tb.Helper()
	co, err := s.ConnectionOptions()
	if err != nil {
		tb.Fatal(err)
	}
	return co
}

// connect dials the server and starts a worker with the test workflows.
func connect(tb testing.TB, s *Server) client.Client {
	tb.Helper()
	c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace(), Logger: quietSDKLogger(), ConnectionOptions: ownerConnection(tb, s)})
	if err != nil {
		tb.Fatalf("dial: %v", err)
	}
	w := worker.New(c, taskQueue, worker.Options{})
	for _, wf := range []any{TaggedWorkflow, WaitWorkflow, SequentialWorkflow, ParallelWorkflow, TimerWorkflow} {
		w.RegisterWorkflow(wf)
	}
	w.RegisterActivityWithOptions(Echo, activity.RegisterOptions{Name: "Echo"})
	w.RegisterActivityWithOptions(Noop, activity.RegisterOptions{Name: "Noop"})
	if err := w.Start(); err != nil {
		tb.Fatalf("worker: %v", err)
	}
	// Registered after the server's Stop cleanup, so they run before it.
	tb.Cleanup(func() {
		w.Stop()
		c.Close()
	})
	return c
}

func run(tb testing.TB, c client.Client, id string, wf any, args ...any) client.WorkflowRun {
	tb.Helper()
	r, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: id, TaskQueue: taskQueue, WorkflowExecutionTimeout: 2 * time.Minute,
	}, wf, args...)
	if err != nil {
		tb.Fatalf("start %s: %v", id, err)
	}
	return r
}

func ctxTimeout(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// --- tests ---

// TestShortTimersFireSoon: a 1 ms timer wakes its workflow well within the
// timer queue's default read-ahead of a second (timerShift), which it did
// not before: each of ten took 1.00 s.
func TestShortTimersFireSoon(t *testing.T) {
	c := connect(t, newServer(t, t.TempDir()))
	var took []time.Duration
	if err := run(t, c, "timers", TimerWorkflow, 5).Get(ctxTimeout(t, time.Minute), &took); err != nil {
		t.Fatal(err)
	}
	for i, d := range took {
		if d >= 500*time.Millisecond {
			t.Errorf("timer %d of 1ms took %v, want well under the default 1s read-ahead: %v", i, d, took)
		}
	}
}

func TestSearchAttributesAndVisibility(t *testing.T) {
	s := newServer(t, t.TempDir())
	if s.Namespace() != "default" {
		t.Errorf("Namespace() = %q, want default", s.Namespace())
	}
	c := connect(t, s)

	var out string
	if err := run(t, c, "tagged-p", TaggedWorkflow, "p").Get(ctxTimeout(t, 30*time.Second), &out); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	if out != "hello p" {
		t.Fatalf("result %q", out)
	}
	if err := run(t, c, "tagged-q", TaggedWorkflow, "q").Get(ctxTimeout(t, 30*time.Second), nil); err != nil {
		t.Fatalf("workflow: %v", err)
	}

	// Visibility is written asynchronously: poll.
	query := `KumoProject = "p" AND KumoRevision = 3 AND KumoOperation = "apply"`
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: s.Namespace(), Query: query,
		})
		if err != nil {
			t.Fatalf("list %q: %v", query, err)
		}
		if n := len(resp.Executions); n == 1 && resp.Executions[0].Status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			got := resp.Executions[0]
			if got.Execution.WorkflowId != "tagged-p" {
				t.Fatalf("found %s, want tagged-p", got.Execution.WorkflowId)
			}
			break
		} else if n > 1 {
			t.Fatalf("query %q matched %d workflows, want 1", query, n)
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow not found by %q", query)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Registration is idempotent against the running server.
	if err := RegisterSearchAttributes(ctxTimeout(t, 10*time.Second), c, s.Namespace()); err != nil {
		t.Fatalf("RegisterSearchAttributes again: %v", err)
	}
}

// TestRegisterSearchAttributesAddsMissing removes kumo's attributes from the
// namespace (as if it were created by something else) and registers them.
func TestRegisterSearchAttributesAddsMissing(t *testing.T) {
	s := newServer(t, t.TempDir())
	c := connect(t, s)
	ctx := ctxTimeout(t, 40*time.Second)
	ops := c.OperatorService()
	if _, err := ops.RemoveSearchAttributes(ctx, &operatorservice.RemoveSearchAttributesRequest{Namespace: s.Namespace(), SearchAttributes: []string{"KumoStack", "KumoRevision"}}); err != nil {
		t.Fatalf("remove: %v", err)
	}
	// Wait until the removal is visible, then register.
	for {
		missing, err := missingSearchAttributes(ctx, ops, s.Namespace())
		if err != nil {
			t.Fatal(err)
		}
		if len(missing) == 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := RegisterSearchAttributes(ctx, c, s.Namespace()); err != nil {
		t.Fatalf("RegisterSearchAttributes: %v", err)
	}
	if missing, err := missingSearchAttributes(ctx, ops, s.Namespace()); err != nil || len(missing) != 0 {
		t.Fatalf("after register: missing %v, err %v", missing, err)
	}
}

func TestLockSameProcess(t *testing.T) {
	dir := t.TempDir()
	newServer(t, dir)
	t0 := time.Now()
	_, err := Start(context.Background(), Options{Dir: dir, adminWorkflows: testWorkflows})
	if err == nil {
		t.Fatal("second Start on the same Dir succeeded")
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("error does not wrap ErrLocked: %v", err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("second Start took %v, want fail-fast", d)
	}
	msg := err.Error()
	for _, want := range []string{"another kumo process", dir, "wait for it", "stop it", fmt.Sprint(os.Getpid())} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	t.Log(msg)
}

// TestLockOtherProcess holds the lock from a child process (this test binary
// re-executed) and checks Start refuses, then succeeds once the child exits.
func TestLockOtherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLockHolder$")
	cmd.Env = append(os.Environ(), "KUMO_EMBEDDED_LOCK_HELPER="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer reap(t, cmd)
	sc := bufio.NewScanner(stdout)
	locked := false
	for sc.Scan() {
		if sc.Text() == "locked" {
			locked = true
			break
		}
	}
	if !locked {
		t.Fatal("helper did not take the lock")
	}
	_, err = Start(context.Background(), Options{Dir: dir, adminWorkflows: testWorkflows})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Start while another process holds the lock: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("error does not name the holder pid %d: %v", cmd.Process.Pid, err)
	}
	if err := stdin.Close(); err != nil { // helper exits, the kernel drops its lock
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, stdout); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lock holder: %v", err)
	}
	newServer(t, dir)
}

func TestHelperLockHolder(t *testing.T) {
	dir := os.Getenv("KUMO_EMBEDDED_LOCK_HELPER")
	if dir == "" {
		t.Skip("helper process for TestLockOtherProcess")
	}
	if _, err := lockDir(dir); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	_, err = Start(context.Background(), Options{Dir: dir, adminWorkflows: testWorkflows, Port: port})
	if err == nil {
		t.Fatal("Start on a port in use succeeded")
	}
	if !strings.Contains(err.Error(), fmt.Sprint(port)) || !strings.Contains(err.Error(), "not available") {
		t.Errorf("unclear error: %v", err)
	}
	t.Log(err)
	// The failed Start released the lock.
	s := newServer(t, dir)
	if strings.HasSuffix(s.Address(), fmt.Sprintf(":%d", port)) {
		t.Errorf("server took the busy port")
	}
}

func TestFixedPort(t *testing.T) {
	ports, err := quietport.Pick("127.0.0.1", 1)
	if err != nil {
		t.Fatal(err)
	}
	port := ports[0]
	s, err := Start(ctxTimeout(t, time.Minute), Options{Dir: t.TempDir(), adminWorkflows: testWorkflows, Port: port, Namespace: "kumo-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if want := fmt.Sprintf("127.0.0.1:%d", port); s.Address() != want {
		t.Errorf("Address() = %q, want %q", s.Address(), want)
	}
	if s.Namespace() != "kumo-test" {
		t.Errorf("Namespace() = %q", s.Namespace())
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestRestartPersistence(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(ctxTimeout(t, time.Minute), Options{Dir: dir, adminWorkflows: testWorkflows})
	if err != nil {
		t.Fatal(err)
	}
	firstLife(t, s)
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	secondLife(t, dir)
}

// TestRestartAfterKill runs the first life in a child process and kills it
// with SIGKILL (no Stop): the lock goes with the process and nothing
// committed is lost.
func TestRestartAfterKill(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFirstLife$")
	cmd.Env = append(os.Environ(), "KUMO_EMBEDDED_FIRST_LIFE="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer reap(t, cmd)
	sc := bufio.NewScanner(stdout)
	ready := false
	for sc.Scan() {
		if sc.Text() == "ready" {
			ready = true
			break
		}
		t.Log("child:", sc.Text())
	}
	if !ready {
		t.Fatal("child did not finish its first life")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, stdout); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) {
		t.Fatalf("killed child: %v, want it killed", err)
	}
	secondLife(t, dir)
}

func TestHelperFirstLife(t *testing.T) {
	dir := os.Getenv("KUMO_EMBEDDED_FIRST_LIFE")
	if dir == "" {
		t.Skip("helper process for TestRestartAfterKill")
	}
	s, err := Start(ctxTimeout(t, time.Minute), Options{Dir: dir, adminWorkflows: testWorkflows})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	firstLife(t, s)
	fmt.Println("ready")
	select {} // wait to be killed
}

// firstLife completes one workflow and leaves one waiting for a signal.
func firstLife(t *testing.T, s *Server) {
	t.Helper()
	c := connectNoCleanup(t, s)
	defer c.close()
	if err := run(t, c.c, "done", TaggedWorkflow, "p").Get(ctxTimeout(t, 30*time.Second), nil); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	run(t, c.c, "waiting", WaitWorkflow)
	// Let the first workflow task of "waiting" complete: it is now blocked
	// on the signal.
	waitFor(t, func() bool {
		h := c.c.GetWorkflowHistory(context.Background(), "waiting", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for h.HasNext() {
			e, err := h.Next()
			if err != nil {
				return false
			}
			if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
				return true
			}
		}
		return false
	})
}

// secondLife starts on the same directory and checks the completed workflow
// and its history are there, and the waiting one can be signalled to
// completion.
func secondLife(t *testing.T, dir string) {
	t.Helper()
	s := newServer(t, dir)
	c := connect(t, s)
	var out string
	if err := c.GetWorkflow(context.Background(), "done", "").Get(ctxTimeout(t, 10*time.Second), &out); err != nil || out != "hello p" {
		t.Fatalf("completed workflow after restart: %q, %v", out, err)
	}
	h := c.GetWorkflowHistory(context.Background(), "done", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	events := 0
	for h.HasNext() {
		if _, err := h.Next(); err != nil {
			t.Fatal(err)
		}
		events++
	}
	if events < 10 {
		t.Errorf("history of completed workflow has %d events after restart", events)
	}
	if err := c.SignalWorkflow(context.Background(), "waiting", "", "go", "now"); err != nil {
		t.Fatalf("signal after restart: %v", err)
	}
	if err := c.GetWorkflow(context.Background(), "waiting", "").Get(ctxTimeout(t, 30*time.Second), &out); err != nil || out != "got now" {
		t.Fatalf("signalled workflow after restart: %q, %v", out, err)
	}
}

type conn struct {
	c client.Client
	w worker.Worker
}

func (c conn) close() { c.w.Stop(); c.c.Close() }

func connectNoCleanup(t *testing.T, s *Server) conn {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace(), Logger: quietSDKLogger(), ConnectionOptions: ownerConnection(t, s)})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(TaggedWorkflow)
	w.RegisterWorkflow(WaitWorkflow)
	w.RegisterActivityWithOptions(Echo, activity.RegisterOptions{Name: "Echo"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	return conn{c: c, w: w}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestQuiet checks the server and a workflow run write nothing to stdout or
// stderr when no Logger is given.
func TestQuiet(t *testing.T) {
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	var wg sync.WaitGroup
	var got [2][]byte
	for i, r := range []*os.File{outR, errR} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if got[i], err = io.ReadAll(r); err != nil {
				t.Error(err)
			}
		}()
	}
	os.Stdout, os.Stderr = outW, errW
	func() {
		defer func() { os.Stdout, os.Stderr = stdout, stderr }()
		s, err := Start(ctxTimeout(t, time.Minute), Options{Dir: t.TempDir(), adminWorkflows: testWorkflows})
		if err != nil {
			t.Error(err)
			return
		}
		c := connectNoCleanup(t, s)
		if err := run(t, c.c, "quiet", TaggedWorkflow, "p").Get(ctxTimeout(t, 30*time.Second), nil); err != nil {
			t.Error(err)
		}
		c.close()
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}()
	for _, w := range []*os.File{outW, errW} {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
	if len(got[0]) > 0 || len(got[1]) > 0 {
		t.Errorf("server printed:\nstdout: %s\nstderr: %s", got[0], got[1])
	}
}

// TestLoggerReceivesServerLogs checks the slog adapter is wired.
func TestLoggerReceivesServerLogs(t *testing.T) {
	var mu sync.Mutex
	var buf strings.Builder
	h := slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelInfo})
	s, err := Start(ctxTimeout(t, time.Minute), Options{Dir: t.TempDir(), adminWorkflows: testWorkflows, Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(buf.String(), "component=temporal") {
		t.Errorf("no server logs reached the logger: %q", buf.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestSchemaCreatedOnce(t *testing.T) {
	dir := t.TempDir()
	// A leftover from an interrupted first start must not matter.
	if err := os.WriteFile(filepath.Join(dir, dbFileName+".init"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ensureSchema(filepath.Join(dir, dbFileName)); err != nil {
		t.Fatal(err)
	}
	st1, err := os.Stat(filepath.Join(dir, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := ensureSchema(filepath.Join(dir, dbFileName)); err != nil {
		t.Fatal(err)
	}
	st2, err := os.Stat(filepath.Join(dir, dbFileName))
	if err != nil {
		t.Fatal(err)
	}
	if !st1.ModTime().Equal(st2.ModTime()) || st1.Size() != st2.Size() {
		t.Error("schema setup ran again on an existing database")
	}
	if _, err := os.Stat(filepath.Join(dir, dbFileName+".init")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left behind: %v", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	if _, err := Start(context.Background(), Options{}); err == nil {
		t.Error("Start without Dir succeeded")
	}
	if _, err := Start(context.Background(), Options{Dir: filepath.Join(t.TempDir(), "a?b")}); err == nil {
		t.Error("Start with '?' in Dir succeeded")
	}
}

// --- benchmarks ---

// tuningVariants switch kumo's tuning on step by step. Run with a fixed
// count, e.g. -bench Activity -benchtime 200x: each round starts a server.
var tuningVariants = []struct {
	name string
	tune tuning
}{
	{"defaults", tuning{}},
	{"pollRPS", tuning{pollRPS: true}},
	{"pollRPS+wal", tuning{pollRPS: true, wal: true}},
	{"pollRPS+wal+singlePartition", tuning{pollRPS: true, wal: true, singlePartition: true}},
	{"kumo", fullTuning},
}

// BenchmarkSequentialActivity runs one workflow executing b.N activities one
// after another and reports the latency per activity, with kumo's tuning and
// with the server's defaults.
func BenchmarkSequentialActivity(b *testing.B) {
	benchSteps(b, "seq", SequentialWorkflow, true, "ms/activity")
}

// BenchmarkParallelActivity runs b.N activities at once in one workflow.
func BenchmarkParallelActivity(b *testing.B) {
	benchSteps(b, "par", ParallelWorkflow, true, "ms/activity")
}

// BenchmarkTimer runs one workflow sleeping 1 ms b.N times and reports how
// long each sleep took, with kumo's tuning and with the server's defaults.
func BenchmarkTimer(b *testing.B) {
	benchSteps(b, "timers", TimerWorkflow, false, "ms/timer")
}

// benchSteps runs workflow wf with b.N steps (its argument) under each tuning
// variant and reports the time per step as unit. warmUp first runs it with 3
// steps: the first workflow task, the sticky cache and the task queue's load
// are not what a step costs.
func benchSteps(b *testing.B, id string, wf any, warmUp bool, unit string) {
	for _, v := range tuningVariants {
		b.Run(v.name, func(b *testing.B) {
			c := connect(b, startServerTuned(b, b.TempDir(), v.tune))
			if warmUp {
				if err := run(b, c, "warmup", wf, 3).Get(context.Background(), nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			t0 := time.Now()
			if err := run(b, c, id, wf, b.N).Get(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(time.Since(t0).Microseconds())/1000/float64(b.N), unit)
		})
	}
}

// BenchmarkStart measures Start and Stop on an existing database.
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	s, err := Start(context.Background(), Options{Dir: dir, adminWorkflows: testWorkflows})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		b.Fatal(err)
	}
	var starting, stopping time.Duration
	for b.Loop() {
		t0 := time.Now()
		s, err := Start(context.Background(), Options{Dir: dir, adminWorkflows: testWorkflows})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
		starting += t1.Sub(t0)
		stopping += time.Since(t1)
	}
	b.ReportMetric(float64(starting.Microseconds())/1000/float64(b.N), "ms/start")
	b.ReportMetric(float64(stopping.Microseconds())/1000/float64(b.N), "ms/stop")
}

// reap kills and waits for a child a test started, unless it was already
// waited for: a killed child's exit error is what is expected.
func reap(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if cmd.ProcessState != nil {
		return
	}
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill %d: %v", cmd.Process.Pid, err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &exit) {
		t.Errorf("wait for %d: %v", cmd.Process.Pid, err)
	}
}

// TestMaintenanceWorkersOnlyWhenAsked: Temporal's maintenance workers poll
// only on a server started with Maintenance (kumo server). On a one-command
// server their pollers, which Temporal never stops, would hold every Stop for
// the frontend's 1 s drain.
func TestMaintenanceWorkersOnlyWhenAsked(t *testing.T) {
	const scannerQueue = "temporal-sys-tq-scanner-taskqueue-0"
	for _, maintenance := range []bool{true, false} {
		t.Run(fmt.Sprintf("maintenance=%v", maintenance), func(t *testing.T) {
			s, err := Start(ctxTimeout(t, time.Minute), Options{Dir: t.TempDir(), adminWorkflows: testWorkflows, Maintenance: maintenance})
			if err != nil {
				t.Fatal(err)
			}
			c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: "temporal-system", Logger: quietSDKLogger(), ConnectionOptions: ownerConnection(t, s)})
			if err != nil {
				t.Fatal(err)
			}
			pollers := 0
			for deadline := time.Now().Add(3 * time.Second); pollers == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				d, err := c.DescribeTaskQueue(ctxTimeout(t, 10*time.Second), scannerQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
				if err != nil {
					t.Fatal(err)
				}
				pollers = len(d.GetPollers())
			}
			c.Close()
			if got := pollers > 0; got != maintenance {
				t.Errorf("%d pollers on %s, want some: %v", pollers, scannerQueue, maintenance)
			}
			t0 := time.Now()
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			t.Logf("stopped in %v", time.Since(t0).Round(time.Millisecond))
		})
	}
}
