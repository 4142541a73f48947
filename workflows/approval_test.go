package workflows

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// approvalSpec is two resources, one after the other, that an apply creates.
func approvalSpec() *engine.Spec {
	return &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a")}}
}

// asBeforeApprovalUpdate makes the run take the version of runs started before
// approvalChange: it waits for ApprovalSignal, an hour. Such runs may still be
// waiting when a worker with this code picks them up.
func asBeforeApprovalUpdate(env *testsuite.TestWorkflowEnvironment, in *runspec.RunInput) {
	in.AutoApprove = false
	asBeforeShape(env)
	env.OnGetVersion(approvalChange, workflow.DefaultVersion, approvalVersion).Return(workflow.DefaultVersion)
}

// asBeforeShape makes the run one recorded before shapeChange, which takes
// each change's own version: a test can then set one of them.
func asBeforeShape(env *testsuite.TestWorkflowEnvironment) {
	env.OnGetVersion(shapeChange, workflow.DefaultVersion, shapeVersion).Return(workflow.DefaultVersion)
}

// whileAwaitingApproval sets the run up to wait for approval the way runs
// before approvalChange did (signal) and calls act once it does: the
// environment's clock only moves on while no activity runs, so a minute after
// the start the run is waiting (the approval timeout is an hour). It fails the
// test if the run is anywhere else by then.
func whileAwaitingApproval(t *testing.T, act func(env *testsuite.TestWorkflowEnvironment)) func(*testsuite.TestWorkflowEnvironment, *runspec.RunInput) {
	return func(env *testsuite.TestWorkflowEnvironment, in *runspec.RunInput) {
		asBeforeApprovalUpdate(env, in)
		env.RegisterDelayedCallback(func() {
			v, err := env.QueryWorkflow(runspec.ProgressQuery)
			if err != nil {
				t.Errorf("progress query: %v", err)
				return
			}
			var p runspec.Progress
			if err := v.Get(&p); err != nil {
				t.Errorf("progress: %v", err)
				return
			}
			if p.Stage != runspec.StageApproval {
				t.Errorf("stage %q, want %q", p.Stage, runspec.StageApproval)
			}
			act(env)
		}, time.Minute)
	}
}

// assertFailedUnapplied checks that the run's release is finished as failed
// with msg, and that nothing was applied.
func (h *harness) assertFailedUnapplied(res runspec.Result, err error, msg string) {
	h.t.Helper()
	if err == nil || !strings.Contains(err.Error(), msg) {
		h.t.Errorf("run error %v, want %q", err, msg)
	}
	if res.Phase != engine.PhaseFailed || res.Error != msg {
		h.t.Errorf("result %s %q, want failed %q", res.Phase, res.Error, msg)
	}
	h.assertReleaseFailedUnapplied(msg)
}

// assertReleaseFailedUnapplied checks that revision 1 ended failed with msg and
// that nothing was applied.
func (h *harness) assertReleaseFailedUnapplied(msg string) {
	h.t.Helper()
	rel, err := h.backend.GetRelease(context.Background(), "p", "w", 1)
	if err != nil {
		h.t.Fatal(err)
	}
	if rel.Phase != engine.PhaseFailed || rel.Error != msg {
		h.t.Errorf("release %s %q, want failed %q", rel.Phase, rel.Error, msg)
	}
	if rel.State != nil && len(rel.State.Resources) != 0 {
		h.t.Errorf("release state %+v, want empty", rel.State.Resources)
	}
	if len(h.rt.applied) != 0 || len(h.rt.objects) != 0 {
		h.t.Errorf("applied %v (objects %v), want nothing", h.rt.applied, h.rt.objects)
	}
}

// failedResult is the Result a failed run carries in its error's details.
func failedResult(t *testing.T, err error) runspec.Result {
	t.Helper()
	var res runspec.Result
	if err == nil {
		return res
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatalf("run error %v carries no result", err)
	}
	if derr := app.Details(&res); derr != nil {
		t.Fatalf("result in %v: %v", err, derr)
	}
	return res
}

func TestApplyWaitsForApprovalThenApplies(t *testing.T) {
	h := newHarness(t)
	res, err := h.runWith(Apply, approvalSpec(), whileAwaitingApproval(t, func(env *testsuite.TestWorkflowEnvironment) {
		env.SignalWorkflow(runspec.ApprovalSignal, runspec.Approval{Approved: true})
	}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Phase != engine.PhaseSucceeded || strings.Join(h.rt.applied, ",") != "v1:ConfigMap:ns:a,v1:ConfigMap:ns:b" {
		t.Errorf("result %s, applied %v", res.Phase, h.rt.applied)
	}
}

func TestApplyRejectedAppliesNothing(t *testing.T) {
	h := newHarness(t)
	_, err := h.runWith(Apply, approvalSpec(), whileAwaitingApproval(t, func(env *testsuite.TestWorkflowEnvironment) {
		env.SignalWorkflow(runspec.ApprovalSignal, runspec.Approval{Approved: false})
	}))
	h.assertFailedUnapplied(failedResult(t, err), err, "cancelled: the preview was not approved")
}

// TestApplyNotApprovedInTimeAppliesNothing: the test environment skips the
// hour of waiting.
func TestApplyNotApprovedInTimeAppliesNothing(t *testing.T) {
	h := newHarness(t)
	var start time.Time
	var env *testsuite.TestWorkflowEnvironment
	_, err := h.runWith(Apply, approvalSpec(), func(e *testsuite.TestWorkflowEnvironment, in *runspec.RunInput) {
		asBeforeApprovalUpdate(e, in)
		env, start = e, e.Now()
	})
	h.assertFailedUnapplied(failedResult(t, err), err, "not approved within "+signalApprovalTimeout.String())
	if waited := env.Now().Sub(start); waited < signalApprovalTimeout {
		t.Errorf("the run gave up after %s of workflow time, before the approval timeout %s", waited, signalApprovalTimeout)
	}
}

func TestApplyCancelledWhileAwaitingApprovalAppliesNothing(t *testing.T) {
	h := newHarness(t)
	_, err := h.runWith(Apply, approvalSpec(), whileAwaitingApproval(t, func(env *testsuite.TestWorkflowEnvironment) {
		env.CancelWorkflow()
	}))
	// A cancelled run ends as cancelled in Temporal (no result); the release
	// says why it failed.
	var cancelled *temporal.CanceledError
	if !errors.As(err, &cancelled) {
		t.Errorf("run error %v, want cancelled", err)
	}
	h.assertReleaseFailedUnapplied("cancelled (no reason given)")
}
