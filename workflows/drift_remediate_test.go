package workflows

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
)

// testHook is a webhook to a loopback test receiver: allowed explicitly by
// workspace "w" as stored in b (the worker reads what a webhook may reach
// there) and signed with a secret from the worker's environment.
func testHook(t *testing.T, b backend.Backend, url string) drift.Webhook {
	t.Setenv("KUMO_WEBHOOK_TEST_SECRET", "s3cret")
	hook := drift.Webhook{URL: url, AllowPrivate: true, SecretEnv: "KUMO_WEBHOOK_TEST_SECRET"}
	if err := b.PutWorkspace(context.Background(), &engine.Workspace{Name: "w", Drift: drift.Config{Webhook: hook}}); err != nil {
		t.Fatal(err)
	}
	return hook
}

// TestDriftRemediateWithFailingWebhook: a remediate-mode check repairs the
// drift through a Remediate run (revision 2, operation remediate), and a
// webhook that answers 500 is retried and never fails the check.
func TestDriftRemediateWithFailingWebhook(t *testing.T) {
	h := newHarness(t)
	var posts atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer hook.Close()
	a := cm("a")
	a.Attributes["data"] = map[string]any{"k": "v"}
	recordRelease(t, h, a)
	h.rt.objects[a.ID]["data"] = map[string]any{"k": "changed"}

	env := h.NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "kumo-drift/p/w/1"})
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
	activities.Register(env, h.acts)
	Register(env)
	env.ExecuteWorkflow(runspec.DriftWorkflow, runspec.DriftInput{Project: "p", Workspace: "w", Mode: drift.ModeRemediate, Drift: drift.Config{Webhook: testHook(t, h.backend, hook.URL)}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("the check failed: %v", err)
	}
	var res runspec.DriftResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if st := res.Remediation; st == nil || st.Outcome != drift.OutcomeSucceeded || st.Revision != 2 {
		t.Fatalf("remediation %+v", st)
	}
	if got := h.rt.objects[a.ID]["data"].(map[string]any)["k"]; got != "v" {
		t.Errorf("live after remediation: %v", got)
	}
	rel, err := h.backend.GetRelease(context.Background(), "p", "w", 2)
	if err != nil || rel.Operation != engine.OperationRemediate || rel.Reason == "" {
		t.Fatalf("release 2: %+v, %v", rel, err)
	}
	// drift-detected, remediation-started and remediated, each tried notifyAttempts times.
	if n := posts.Load(); n != 3*notifyAttempts {
		t.Errorf("webhook got %d POSTs, want %d", n, 3*notifyAttempts)
	}
	rep, err := h.backend.DriftReport(context.Background(), "p", "w", res.RunID)
	if err != nil || rep.Remediation == nil || rep.Remediation.Outcome != drift.OutcomeSucceeded {
		t.Fatalf("stored report: %+v, %v", rep, err)
	}
}

// TestDriftRemediateBusy: while an apply of the stack runs, a remediation
// cannot start (the stack's apply ID is taken): the outcome is busy, the
// attempt does not count, and nothing is applied beside the apply.
func TestDriftRemediateBusy(t *testing.T) {
	h := newHarness(t)
	a := cm("a")
	a.Attributes["data"] = map[string]any{"k": "v"}
	recordRelease(t, h, a)
	h.rt.objects[a.ID]["data"] = map[string]any{"k": "changed"}
	holding, release := make(chan struct{}), make(chan struct{})
	h.rt.onApply = func(id string) {
		if id == "v1:ConfigMap:ns:hold" {
			close(holding)
			<-release
		}
	}
	tc := startWorker(t, h.acts)
	ctx := context.Background()
	// The apply leaves a as it is live (drifted from revision 1) and holds on
	// another resource.
	live := cm("a")
	live.Attributes["data"] = map[string]any{"k": "changed"}
	hash, err := h.backend.PutSpec(ctx, &engine.Spec{Resources: []engine.Resource{live, cm("hold", a.ID)}})
	if err != nil {
		t.Fatal(err)
	}
	apply, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue},
		runspec.ApplyWorkflow, runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true})
	if err != nil {
		t.Fatal(err)
	}
	<-holding
	check, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kumo-drift/p/w/busy", TaskQueue: runspec.TaskQueue},
		runspec.DriftWorkflow, runspec.DriftInput{Project: "p", Workspace: "w", Mode: drift.ModeRemediate})
	if err != nil {
		t.Fatal(err)
	}
	var res runspec.DriftResult
	err = check.Get(ctx, &res)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Remediation; st == nil || st.Outcome != drift.OutcomeBusy || st.Attempts != 0 || st.Revision != 0 {
		t.Fatalf("remediation while an apply runs: %+v", st)
	}
	if err := apply.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
}
