package workflows

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/planpolicy"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/auth"
	"github.com/kumoproj/kumo/server/embedded"
)

var (
	record     = flag.Bool("record", false, "record testdata/*.json anew from runs on an embedded Temporal server")
	recordOnly = flag.String("record-only", "", "with -record, record only the runs of these names, comma-separated (keeping the other histories as they are)")
	recordTag  = flag.String("record-tag", "", "with -record: name the files <run>-<tag>.json, keeping the histories of earlier shapes")
)

// TestReplayRecordedHistories replays histories recorded by earlier versions of
// the workflows: a change that would break runs in flight (nondeterminism) fails
// here, and needs workflow.GetVersion. Record new histories with -record when a
// workflow changes on purpose, and keep the old ones.
func TestReplayRecordedHistories(t *testing.T) {
	if *record {
		recordHistories(t)
	}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []interceptor.WorkerInterceptor{Interceptor}})
	if err != nil {
		t.Fatal(err)
	}
	Register(r)
	for _, f := range files {
		if err := replay(r, f); err != nil {
			t.Errorf("replay %s: %v", f, err)
		}
	}
}

// replay replays the history in file f on r, with the historyBudget it was
// recorded with (replayHistory).
func replay(r worker.WorkflowReplayer, f string) error {
	data, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	h, err := client.HistoryFromJSON(bytes.NewReader(data), client.HistoryJSONOptions{})
	if err != nil {
		return err
	}
	return replayHistory(r, f, h)
}

// Runs named long-* are recorded, and replayed, with a historyBudget of
// longBudget: their history is long (longHistory) from the walk on, so they
// take the shapes of a run of tens of thousands of resources with a few.
const (
	longPrefix = "long-"
	longBudget = 80
)

// Runs named kept-* are recorded without the operator's plan policy, whose
// check is an ordinary activity between the previews and the walk.
const keptPrefix = "kept-"

// recordHistories runs Apply (create, a rejected node), Apply (update, delete,
// unchanged, a reference), Preview, Destroy, Rollback and an Apply that fails and compensates, against a real embedded server
// with an in-memory runtime, and saves each history. Runs of the current
// version (v2-*: KumoStatus, the changes memo, cancel) add an apply that waits
// for approval and one cancelled half-way; approval-* runs wait for an
// approval (ApproveUpdate) that rejects, comes after what is live changed
// (stale), or never comes; apply-queue runs its runtime steps on a
// workspace's task queue; apply-refresh refreshes the record of an unchanged
// resource once approved; apply-policies has a plan policy warn. Histories already in testdata are kept: they are
// what earlier versions recorded.
func recordHistories(t *testing.T) {
	ctx := context.Background()
	// The people's runs authenticate as they would through the kumo
	// frontend: by bearer token, with the roles recordPeoplePolicy grants.
	srv, err := embedded.Start(ctx, embedded.Options{Dir: t.TempDir(),
		Verifiers:  []auth.BearerVerifier{peopleTokens{"token-" + pAlice.Name: pAlice, "token-" + pBob.Name: pBob, "token-" + pErin.Name: pErin}},
		PolicyFile: recordPeoplePolicy(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	tc, err := client.Dial(client.Options{HostPort: srv.Address(), Logger: quietLogger, ConnectionOptions: ownerConnection(t, srv)})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &waitingRuntime{&fakeRuntime{objects: map[string]map[string]any{}, reject: map[string]bool{"v1:ConfigMap:ns:bad": true, "batch/v1:Job:ns:bad-pre": true}}}
	// The cancelled run is cancelled while its second resource applies, the
	// way `kumo run cancel` does it: the reason, then Temporal's cancel request.
	rt.onApply = func(id string) {
		if id != "v1:ConfigMap:ns:cancel-here" {
			return
		}
		wid := recordID(runspec.ApplyWorkflow, "p", "w", "v2-apply-cancel")
		if err := tc.SignalWorkflow(ctx, wid, "", runspec.CancelSignal, runspec.Cancel{Reason: "recorded"}); err != nil {
			t.Error(err)
		}
		if err := tc.CancelWorkflow(ctx, wid, ""); err != nil {
			t.Error(err)
		}
		// The apply is a local step: the run takes the cancel in when the
		// walk gives its workflow task back, after localStepBudget of steps.
		time.Sleep(localStepBudget + 100*time.Millisecond)
	}
	w := worker.New(tc, runspec.TaskQueue, worker.Options{Interceptors: []interceptor.WorkerInterceptor{Interceptor}})
	Register(w)
	acts := activities.New(b, rt, notRunning{})
	activities.SetGeneration(acts, generate.Policy{AnyStackDir: true})
	// Operator policies (v15): a warn for resources labelled policy=warn,
	// which only apply-policies has.
	policies, err := planpolicy.Compile([]planpolicy.Rule{{Name: "recorded-warn", Match: planpolicy.Selector{Labels: map[string]string{"policy": "warn"}},
		Expression: "false", Message: "recorded", Effect: planpolicy.Warn}}, "recording")
	if err != nil {
		t.Fatal(err)
	}
	activities.SetPolicies(acts, policies)
	activities.Register(w, acts)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// The runtime steps of a workspace with a task queue run on its workers.
	edge := worker.New(tc, "edge", worker.Options{DisableWorkflowWorker: true})
	activities.Register(edge, activities.New(b, rt, notRunning{}))
	if err := edge.Start(); err != nil {
		t.Fatal(err)
	}
	defer edge.Stop()

	// A stack to generate from, for the runs that start from one.
	project := t.TempDir()
	for path, content := range map[string]string{
		"project.yaml": "name: p\n", "dev/stack.yaml": "name: dev\n",
		"dev/app.yaml": "apps: {web: {workload: {type: service, containers: {web: {image: nginx}}}, accessories: {net: {module: network, ports: [{port: 80}]}}}}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(project, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PutWorkspace(ctx, &engine.Workspace{Name: "w"}); err != nil {
		t.Fatal(err)
	}
	source := &runspec.GenerateInput{StackDir: filepath.Join(project, "dev"), Project: "p", Workspace: "w"}

	withRef := cm("c", "v1:ConfigMap:ns:a")
	withRef.Attributes["data"] = map[string]any{"from": "$kumo_path.v1:ConfigMap:ns:a.metadata.name"}
	runs := []struct {
		name, workflow string
		spec           *engine.Spec
		// answer is the approval the run waits for; nil: auto-approved,
		// unless approvalTimeout lets it wait in vain.
		answer          *runspec.ApprovalRequest
		approvalTimeout time.Duration
	}{
		{"apply-create-and-fail", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a"), cm("bad", "v1:ConfigMap:ns:b")}}, nil, 0},
		{"apply-update-delete-ref", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), withRef}}, nil, 0},
		{"preview", runspec.PreviewWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a")}}, nil, 0},
		{"destroy", runspec.DestroyWorkflow, nil, nil, 0},
		{"rollback", runspec.RollbackWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a")}}, nil, 0},
		// Undone in batches (v9): bad comes after x, y and z, so a failed
		// apply undoes at least three creates, which (parallelism 2) share
		// CompensateResources steps.
		{"apply-compensate", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{
			cm("a"), cm("x"), cm("y"), cm("z"), cm("bad", "v1:ConfigMap:ns:x", "v1:ConfigMap:ns:y", "v1:ConfigMap:ns:z"),
		}}, nil, 0},
		{"generate", runspec.GenerateWorkflow, nil, nil, 0},
		{"apply-from-stack", runspec.ApplyWorkflow, nil, nil, 0},
		{"v2-apply-approved", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a"), cm("bad", "v1:ConfigMap:ns:b")}},
			&runspec.ApprovalRequest{Approve: true, By: "recorder"}, 0},
		{"v2-preview", runspec.PreviewWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("c")}}, nil, 0},
		{"v2-apply-cancel", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{
			cm("a"), cm("cancel-here", "v1:ConfigMap:ns:a"), cm("never", "v1:ConfigMap:ns:cancel-here"),
		}}, nil, 0},
		{"apply-wait", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{notReady("slow"), cm("after", "v1:ConfigMap:ns:slow")}}, nil, 0},
		// Unchanged but not healthy (v13): the same spec again; slow is
		// still not ready live, so the apply waits for it.
		{"apply-wait-unchanged", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{notReady("slow"), cm("after", "v1:ConfigMap:ns:slow")}}, nil, 0},
		// Refresh (v13): records what is live, applies nothing.
		{"refresh", runspec.RefreshWorkflow, &engine.Spec{Resources: []engine.Resource{notReady("slow"), cm("after", "v1:ConfigMap:ns:slow")}}, nil, 0},
		{"approval-rejected", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("r")}},
			&runspec.ApprovalRequest{Reason: "recorded", By: "recorder"}, 0},
		{"approval-stale", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("s")}}, &runspec.ApprovalRequest{Approve: true}, 0},
		{"approval-timeout", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("t")}}, nil, time.Second},
		// Batches (v5): four independent resources in two batches of two,
		// two of which wait for health, then one after them.
		{"apply-batches", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{
			notReady("b1"), cm("b2"), notReady("b3"), cm("b4"), cm("b5", "v1:ConfigMap:ns:b1", "v1:ConfigMap:ns:b4"),
		}}, nil, 0},
		{"apply-queue", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{notReady("slow"), cm("after", "v1:ConfigMap:ns:slow")}}, nil, 0},
		// Previews that write nothing (v6): a and b, then an approved
		// re-apply where b, unchanged, now depends on a (its record is
		// refreshed once approved, RefreshResources) and c is new.
		{"apply-refresh-base", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b")}}, nil, 0},
		{"apply-refresh", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a"), cm("c")}},
			&runspec.ApprovalRequest{Approve: true, By: "recorder"}, 0},
		// Long histories (v12, longBudget): a chain of ConfigMaps applied as
		// chain steps; the health waits after a batch in one WaitResources.
		{"long-chain", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{
			cm("l1"), cm("l2", "v1:ConfigMap:ns:l1"), cm("l3", "v1:ConfigMap:ns:l2"), cm("l4", "v1:ConfigMap:ns:l3"),
		}}, nil, 0},
		{"long-waits", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{
			notReady("w1"), notReady("w2"), notReady("w3"), notReady("w4"), cm("w5", "v1:ConfigMap:ns:w1"),
		}}, nil, 0},
		// Plan policies (v15): the plan is checked after its preview
		// (CheckPolicies), and a warn goes with it.
		{"apply-policies", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{policed("pw"), cm("pc")}}, nil, 0},
		// Dependencies needed only applied (v16, a sync wave's kind tiers):
		// wa2 starts once wa1 is applied, while wa1 waits for its health;
		// wa3 waits for wa1 healthy.
		{"apply-waves", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{
			notReady("wa1"), afterApplied(cm("wa2", "v1:ConfigMap:ns:wa1")), cm("wa3", "v1:ConfigMap:ns:wa1"),
		}}, nil, 0},
		// State surgery (v16): forget c, auto-approved, then move a to
		// another apiVersion, approved; both record, apply nothing.
		{"surgery-base", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a"), cm("c")}}, nil, 0},
		{"forget", runspec.ForgetWorkflow, nil, nil, 0},
		{"move", runspec.MoveWorkflow, nil, &runspec.ApprovalRequest{Approve: true, By: "recorder"}, 0},
		// Hooks (v17): an apply with hooks at every point (RunHooks: pre,
		// sync alongside the walk, post); one whose PreSync hook fails, so
		// nothing is applied and its SyncFail hook runs; then kumo test of
		// the first one's release (Test, RunTests).
		{"apply-hooks", runspec.ApplyWorkflow, hookSpec(), nil, 0},
		{"apply-hooks-fail", runspec.ApplyWorkflow, failingHookSpec(), nil, 0},
		{"test", runspec.TestWorkflow, nil, nil, 0},
		// Chains as chain steps from the first node (v19, chainFromStart):
		// the Namespace a local step, then its chain of ten ConfigMaps one
		// ApplyResources; destroyed dependents first, one DeleteResources.
		{"apply-chain", runspec.ApplyWorkflow, chainSpec(10), nil, 0},
		{"destroy-chain", runspec.DestroyWorkflow, nil, nil, 0},
		// Flat batches (v20, localBatches): four independent ConfigMaps in
		// two batches of two, applied, then destroyed in two batches; since
		// v21 (pools) one ApplyResources and one DeleteResources each, two
		// of their resources going at once.
		// Waits that hold no slot (v23, freeWaits): ws1 and ws2 wait for
		// their health, applied by one step holding both slots
		// (parallelism 2); ws3 needs ws1 only applied. The step gives its
		// slots back once both are applied, so ws3 is applied before their
		// waits end.
		{"apply-wait-slots", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{
			notReady("ws1"), notReady("ws2"), afterApplied(cm("ws3", "v1:ConfigMap:ns:ws1")),
		}}, nil, 0},
		{"apply-flat", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("f1"), cm("f2"), cm("f3"), cm("f4")}}, nil, 0},
		{"destroy-flat", runspec.DestroyWorkflow, nil, nil, 0},
		// Previews kept (v24, recordedPreviewChange): runs with no plan
		// policy (keptPrefix), so that the previews, the phase and the walk
		// are one workflow task; the phase keeps the previews instead of
		// being an ordinary activity.
		{"kept-apply", runspec.ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("f1"), cm("f2"), cm("f3"), cm("f4")}}, nil, 0},
		{"kept-destroy", runspec.DestroyWorkflow, nil, nil, 0},
	}
	budget := historyBudget
	defer func() { historyBudget = budget }()
	only := map[string]bool{}
	for name := range strings.SplitSeq(*recordOnly, ",") {
		only[name] = name != ""
	}
	for _, run := range runs {
		if *recordOnly != "" && !only[run.name] {
			continue
		}
		in := runspec.RunInput{Project: "p", Workspace: "w", AutoApprove: true, Parallelism: 2}
		if run.workflow == runspec.RollbackWorkflow {
			in.RollbackOf = 1
		}
		in.RollbackOnFailure = run.name == "apply-compensate" || run.name == "v2-apply-cancel"
		in.AutoApprove = run.answer == nil && run.approvalTimeout == 0
		in.ApprovalTimeout = run.approvalTimeout
		if run.name == "apply-queue" {
			in.Settings.TaskQueue = "edge"
		}
		switch run.workflow {
		case runspec.ForgetWorkflow:
			in.Surgery = &engine.Surgery{Forget: []string{"v1:ConfigMap:ns:c"}}
		case runspec.MoveWorkflow:
			in.Surgery = &engine.Surgery{Move: &engine.Moved{From: "v1:ConfigMap:ns:a", To: "v2:ConfigMap:ns:a"}}
		}
		if run.spec != nil {
			if in.SpecHash, err = b.PutSpec(ctx, run.spec); err != nil {
				t.Fatal(err)
			}
		}
		var input any = in
		switch run.name {
		case "generate":
			input = *source
		case "apply-from-stack":
			in.Source = source
			input = in
		case "test":
			input = runspec.TestInput{Project: "p", Workspace: "w"}
		}
		historyBudget = budget
		if strings.HasPrefix(run.name, longPrefix) {
			historyBudget = longBudget
		}
		activities.SetPolicies(acts, policies)
		if strings.HasPrefix(run.name, keptPrefix) {
			activities.SetPolicies(acts, nil)
		}
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: recordID(run.workflow, "p", "w", run.name), TaskQueue: runspec.TaskQueue}, run.workflow, input)
		if err != nil {
			t.Fatal(err)
		}
		if run.answer != nil {
			awaitApprovalStage(t, tc, wr)
			if run.name == "approval-stale" { // what the plan creates appears live
				rt.mu.Lock()
				rt.objects["v1:ConfigMap:ns:s"] = cm("s").Attributes
				rt.mu.Unlock()
			}
			if _, err := sendApproval(tc, wr, *run.answer); err != nil {
				t.Fatal(err)
			}
		}
		// Some runs fail on purpose (a rejected node, a cancel); every other must succeed.
		err = wr.Get(ctx, nil)
		switch run.name {
		case "apply-create-and-fail", "apply-compensate", "v2-apply-approved", "v2-apply-cancel", "approval-rejected", "approval-stale", "approval-timeout", "apply-hooks-fail":
			if err == nil {
				t.Fatalf("run %s succeeded; it is recorded to fail", run.name)
			}
		default:
			if err != nil {
				t.Fatalf("run %s: %v", run.name, err)
			}
		}
		saveHistory(t, tc, wr, run.name)
	}
	recordPeopleHistories(t, srv, tc, b, only)
	recordQueueHistory(t, tc, b, only)
}

// chainSpec is the Namespace ns and a chain of n ConfigMaps in it, each
// depending on the one before.
func chainSpec(n int) *engine.Spec {
	spec := &engine.Spec{Resources: []engine.Resource{nsResource()}}
	for i := range n {
		spec.Resources = append(spec.Resources, cm(fmt.Sprintf("k%02d", i), spec.Resources[i].ID))
	}
	return spec
}

// policed is cm(name) labelled policy=warn, which the recording's operator
// policies warn about.
func policed(name string) engine.Resource {
	r := cm(name)
	r.Attributes["metadata"].(map[string]any)["labels"] = map[string]any{"policy": "warn"}
	return r
}

// recordID is the ID of a recorded run named name: the ID form of its
// workflow type (runspec/ids.go), as the frontend requires. Runs that change
// a stack share its one ID, one after the other.
func recordID(workflowType, project, workspace, name string) string {
	id := runspec.MutatingWorkflowID(project, workspace)
	switch workflowType {
	case runspec.PreviewWorkflow:
		return id + "/preview/" + name
	case runspec.GenerateWorkflow:
		return id + "/generate/" + name
	}
	return id
}

// awaitApprovalStage waits until the run says it awaits approval.
func awaitApprovalStage(t *testing.T, tc client.Client, wr client.WorkflowRun) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var p runspec.Progress
		v, err := tc.QueryWorkflow(context.Background(), wr.GetID(), wr.GetRunID(), runspec.ProgressQuery)
		if err == nil && v.Get(&p) == nil && p.Stage == runspec.StageApproval {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not come to await approval (%v)", wr.GetID(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sendApproval answers a run with ApproveUpdate, as `kumo approve` does.
func sendApproval(tc client.Client, wr client.WorkflowRun, req runspec.ApprovalRequest) (runspec.ApprovalAnswer, error) {
	ctx := context.Background()
	h, err := tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: wr.GetID(), RunID: wr.GetRunID(), UpdateName: runspec.ApproveUpdate, Args: []any{req},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var answer runspec.ApprovalAnswer
	if err == nil {
		err = h.Get(ctx, &answer)
	}
	return answer, err
}

// waitingRuntime is fakeRuntime that can wait: whatever it waits for becomes
// Healthy at once, after one Progressing report.
type waitingRuntime struct{ *fakeRuntime }

func (w *waitingRuntime) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return w, nil
}

func (w *waitingRuntime) WaitHealthy(_ context.Context, _ *engine.Resource, opts runtime.WaitOptions) (health.Result, error) {
	if opts.Progress != nil {
		opts.Progress(health.Result{Status: health.Progressing, Message: "not ready"})
	}
	return health.Result{Status: health.Healthy}, nil
}

// notReady is a ConfigMap whose (made-up) Ready condition is False as
// applied, so its node waits for it.
// afterApplied is r needing each of its dependencies only applied.
func afterApplied(r engine.Resource) engine.Resource {
	ids := make([]any, len(r.DependsOn))
	for i, d := range r.DependsOn {
		ids[i] = d
	}
	r.Extensions = map[string]any{engine.ExtAfterApplied: ids}
	return r
}

func notReady(name string, deps ...string) engine.Resource {
	r := cm(name, deps...)
	r.Attributes["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False"}}}
	return r
}

// saveHistory writes the history of wr to testdata/<name>[-<tag>].json, unless
// an earlier version recorded that file already.
func saveHistory(t *testing.T, tc client.Client, wr client.WorkflowRun, name string) {
	t.Helper()
	var events []*historypb.HistoryEvent
	it := tc.GetWorkflowHistory(context.Background(), wr.GetID(), wr.GetRunID(), false, 0)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	data, err := protojson.MarshalOptions{Indent: " "}.Marshal(&historypb.History{Events: events})
	if err != nil {
		t.Fatal(err)
	}
	if *recordTag != "" {
		name += "-" + *recordTag
	}
	path := filepath.Join("testdata", name+".json")
	if _, err := os.Stat(path); err == nil {
		return
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
