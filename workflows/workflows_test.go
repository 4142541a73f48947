package workflows

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// fakeRuntime keeps objects in memory; reject names IDs whose apply fails for good.
type fakeRuntime struct {
	mu      sync.Mutex
	objects map[string]map[string]any
	applied []string
	deleted []string
	reject  map[string]bool
	// onApply, when set, runs at the start of every apply that is not a dry run,
	// outside the lock: tests hold applies there to make them overlap or to act
	// while one is in flight.
	onApply func(id string)
}

func (f *fakeRuntime) Apply(_ context.Context, r *engine.Resource, opts runtime.ApplyOptions) (*engine.Resource, error) {
	if f.onApply != nil && !opts.DryRun {
		f.onApply(r.ID)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reject[r.ID] && !opts.DryRun {
		return nil, runtime.Permanent(fmt.Errorf("apply %s: rejected", r.ID))
	}
	out := *r
	out.Attributes = engine.Normalize(r.Attributes).(map[string]any)
	if !opts.DryRun {
		f.objects[r.ID] = out.Attributes
		f.applied = append(f.applied, r.ID)
	}
	return &out, nil
}

func (f *fakeRuntime) Read(_ context.Context, r *engine.Resource) (*engine.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	attrs, ok := f.objects[r.ID]
	if !ok {
		return nil, nil
	}
	out := *r
	out.Attributes = attrs
	return &out, nil
}

func (f *fakeRuntime) Delete(_ context.Context, r *engine.Resource) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.objects, r.ID)
	f.deleted = append(f.deleted, r.ID)
	return nil
}

func (f *fakeRuntime) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return f, nil
}

// CreateHook keeps the hook as an object (a hook of the same name replaces
// it: runs delete first as their policy says), and counts it as applied.
func (f *fakeRuntime) CreateHook(_ context.Context, r *engine.Resource, run string) (*engine.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := *r
	out.Attributes = engine.Normalize(r.Attributes).(map[string]any)
	f.objects[r.ID] = out.Attributes
	f.applied = append(f.applied, r.ID)
	return &out, nil
}

// WaitHookDone: a hook whose ID reject names fails, as a failed Job does.
func (f *fakeRuntime) WaitHookDone(_ context.Context, r *engine.Resource, _ runtime.WaitOptions) (health.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reject[r.ID] {
		h := health.Result{Status: health.Degraded, Message: "job failed: BackoffLimitExceeded"}
		return h, runtime.Permanent(&runtime.HealthError{ID: r.ID, Health: h})
	}
	return health.Result{Status: health.Healthy, Message: "completed"}, nil
}

var quietLogger = sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

// The SDK names a worker by an MD5 of its binary, computed on the first activity
// a test environment starts, inside the workflow goroutine: for this test binary
// (it links a Temporal server) that took a second on a loaded machine, and the
// test environment's deadlock detection failed the first workflow of a run. A
// fixed name skips it.
func init() { worker.SetBinaryChecksum("kumo-workflows-test") }

type notRunning struct{}

func (notRunning) Running(context.Context, string, string) (bool, error) { return false, nil }

func (notRunning) QueuedSpecs(context.Context) ([]string, error) { return nil, nil }

type harness struct {
	testsuite.WorkflowTestSuite
	t       *testing.T
	rt      *fakeRuntime
	acts    *activities.Activities
	backend *local.Backend
	runs    int
	// rollbackOnFailure is the runs' RunInput.RollbackOnFailure.
	rollbackOnFailure bool
}

func newHarness(t *testing.T) *harness {
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &fakeRuntime{objects: map[string]map[string]any{}, reject: map[string]bool{}}
	h := &harness{t: t, rt: rt, backend: b, acts: activities.New(b, rt, notRunning{})}
	// As a one-shot command's worker: stacks are read wherever they are.
	activities.SetGeneration(h.acts, generate.Policy{AnyStackDir: true})
	h.SetLogger(quietLogger)
	return h
}

// run executes one workflow to its end in the test environment.
func (h *harness) run(wf any, spec *engine.Spec) (runspec.Result, error) {
	h.t.Helper()
	return h.runWith(wf, spec, nil)
}

// runWith is run with setup called on the environment and the input before the
// workflow starts: to turn off auto-approval, or to register callbacks that
// signal or cancel the run.
func (h *harness) runWith(wf any, spec *engine.Spec, setup func(env *testsuite.TestWorkflowEnvironment, in *runspec.RunInput)) (runspec.Result, error) {
	h.t.Helper()
	h.runs++
	env := h.NewTestWorkflowEnvironment()
	// Each run its own workflow ID: the test environment reuses one run ID.
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: fmt.Sprintf("kumo/p/w/%d", h.runs)})
	activities.Register(env, h.acts)
	Register(env)
	in := runspec.RunInput{Project: "p", Workspace: "w", AutoApprove: true, Parallelism: 3, RollbackOnFailure: h.rollbackOnFailure}
	if spec != nil {
		hash, err := h.backend.PutSpec(context.Background(), spec)
		if err != nil {
			h.t.Fatal(err)
		}
		in.SpecHash = hash
	}
	if setup != nil {
		setup(env, &in)
	}
	env.ExecuteWorkflow(wf, in)
	if !env.IsWorkflowCompleted() {
		h.t.Fatal("workflow did not complete")
	}
	var res runspec.Result
	err := env.GetWorkflowError()
	if err == nil {
		err = env.GetWorkflowResult(&res)
	}
	return res, err
}

func cm(name string, deps ...string) engine.Resource {
	return engine.Resource{
		ID: "v1:ConfigMap:ns:" + name, Type: engine.Kubernetes, DependsOn: deps,
		Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns"}},
	}
}

// startApply stores spec in h's backend and starts an auto-approved apply
// of it for p/w on tc, with in's other settings (parallelism, ...).
func startApply(ctx context.Context, t *testing.T, h *harness, tc client.Client, spec *engine.Spec, in runspec.RunInput) client.WorkflowRun {
	t.Helper()
	hash, err := h.backend.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	in.Project, in.Workspace, in.SpecHash, in.AutoApprove = "p", "w", hash, true
	wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow, in)
	if err != nil {
		t.Fatal(err)
	}
	return wr
}

// nsResource is the Namespace ns, which cm's and widget's resources are in.
func nsResource() engine.Resource {
	return engine.Resource{ID: "v1:Namespace:ns", Type: engine.Kubernetes,
		Attributes: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "ns"}}}
}

// widget is a namespaced custom resource that may have a status to wait
// for, unlike a ConfigMap: a chain of widgets runs one step per node
// (chainFollows), which is what the tests of single steps need.
func widget(name string, deps ...string) engine.Resource {
	return engine.Resource{
		ID: "kumo.test/v1:Widget:ns:" + name, Type: engine.Kubernetes, DependsOn: deps,
		Attributes: map[string]any{"apiVersion": "kumo.test/v1", "kind": "Widget", "metadata": map[string]any{"name": name, "namespace": "ns"}},
	}
}

func TestApplyWalksDependenciesInOrder(t *testing.T) {
	h := newHarness(t)
	spec := &engine.Spec{Resources: []engine.Resource{cm("c", "v1:ConfigMap:ns:b"), cm("b", "v1:ConfigMap:ns:a"), cm("a")}}
	res, err := h.run(Apply, spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.rt.applied, ","); got != "v1:ConfigMap:ns:a,v1:ConfigMap:ns:b,v1:ConfigMap:ns:c" {
		t.Errorf("apply order %s", got)
	}
	if res.Revision != 1 || res.Phase != engine.PhaseSucceeded {
		t.Errorf("result %+v", res)
	}
	rel, err := h.backend.GetRelease(context.Background(), "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rel.State.Resources) != 3 || rel.State.Resources[0].ID != "v1:ConfigMap:ns:c" {
		t.Errorf("state %+v, want the 3 resources in spec order", rel.State.Resources)
	}
	entries, err := h.backend.ListStateEntries(context.Background(), backend.KeyOf(rel))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("state entries left after finishing: %d", len(entries))
	}
}

func TestFailedNodeStopsItsDependentsAndFailsTheRelease(t *testing.T) {
	h := newHarness(t)
	h.rt.reject["v1:ConfigMap:ns:b"] = true
	spec := &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a"), cm("c", "v1:ConfigMap:ns:b")}}
	_, err := h.run(Apply, spec)
	if err == nil || !strings.Contains(err.Error(), "v1:ConfigMap:ns:b: rejected") {
		t.Fatalf("error %v, want the rejection of b", err)
	}
	if got := strings.Join(h.rt.applied, ","); got != "v1:ConfigMap:ns:a" {
		t.Errorf("applied %s, want only a", got)
	}
	rel, err := h.backend.GetRelease(context.Background(), "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Phase != engine.PhaseFailed || !strings.Contains(rel.Error, "rejected") {
		t.Errorf("release %s %q", rel.Phase, rel.Error)
	}
	if len(rel.State.Resources) != 1 || rel.State.Resources[0].ID != "v1:ConfigMap:ns:a" {
		t.Errorf("state %+v, want just a", rel.State.Resources)
	}
}

func TestApplyDeletesWhatTheSpecDroppedAndDestroyRemovesTheRest(t *testing.T) {
	h := newHarness(t)
	if _, err := h.run(Apply, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a")}}); err != nil {
		t.Fatal(err)
	}
	res, err := h.run(Apply, &engine.Spec{Resources: []engine.Resource{cm("a")}})
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]engine.Action{}
	for _, c := range res.Changes {
		actions[c.ID] = c.Action
	}
	if actions["v1:ConfigMap:ns:a"] != engine.UnChanged || actions["v1:ConfigMap:ns:b"] != engine.Delete {
		t.Errorf("changes %v", actions)
	}
	if _, ok := h.rt.objects["v1:ConfigMap:ns:b"]; ok {
		t.Error("b not deleted")
	}
	if res, err = h.run(Destroy, nil); err != nil || res.Revision != 3 {
		t.Fatalf("destroy: %+v %v", res, err)
	}
	if len(h.rt.objects) != 0 {
		t.Errorf("left after destroy: %v", h.rt.objects)
	}
	rel, err := h.backend.GetRelease(context.Background(), "p", "w", 3)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Operation != engine.OperationDestroy || len(rel.State.Resources) != 0 {
		t.Errorf("destroy release %+v", rel)
	}
}

// TestApplyGeneratesFromStack: an Apply given a stack generates first, then applies
// the generated resources; a stack that does not generate records no release.
func TestApplyGeneratesFromStack(t *testing.T) {
	h := newHarness(t)
	project := t.TempDir()
	files := map[string]string{
		"project.yaml": "name: p\n", "dev/stack.yaml": "name: dev\n",
		"dev/app.yaml": "apps: {web: {workload: {type: service, containers: {web: {image: nginx}}}}}\n",
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(project, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := h.NewTestWorkflowEnvironment()
	activities.Register(env, h.acts)
	Register(env)
	env.ExecuteWorkflow(Apply, runspec.RunInput{Project: "p", Workspace: engine.DefaultWorkspace, AutoApprove: true,
		Source: &runspec.GenerateInput{StackDir: filepath.Join(project, "dev"), Project: "p", Workspace: engine.DefaultWorkspace}})
	var res runspec.Result
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.rt.applied, ","); got != "v1:Namespace:p,apps/v1:Deployment:p:p-dev-web" {
		t.Errorf("applied %s", got)
	}
	rel, err := h.backend.GetRelease(context.Background(), "p", engine.DefaultWorkspace, 1)
	if err != nil || rel.Stack != "dev" || rel.Phase != engine.PhaseSucceeded {
		t.Fatalf("release %+v, %v", rel, err)
	}

	// A stack that does not generate: no release.
	if err := os.WriteFile(filepath.Join(project, "dev/app.yaml"), []byte("apps: {web: {workload: {type: daemon}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env = h.NewTestWorkflowEnvironment()
	activities.Register(env, h.acts)
	Register(env)
	env.ExecuteWorkflow(Apply, runspec.RunInput{Project: "p", Workspace: engine.DefaultWorkspace, AutoApprove: true,
		Source: &runspec.GenerateInput{StackDir: filepath.Join(project, "dev"), Project: "p", Workspace: engine.DefaultWorkspace}})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), `unknown workload type "daemon"`) {
		t.Fatalf("apply of a bad stack: %v", err)
	}
	if _, err := h.backend.GetRelease(context.Background(), "p", engine.DefaultWorkspace, 2); err == nil {
		t.Error("a stack that did not generate recorded a release")
	}
}
