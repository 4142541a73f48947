package workflows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// The SDK computes an MD5 of the test binary (which links a Temporal server)
// inside the first workflow goroutine that starts an activity; on a loaded
// machine that took over a second, and the test environment's deadlock
// detection failed the run. A fixed checksum skips it.
func init() { worker.SetBinaryChecksum("kumo-workflows-test") }

// waitingRun is one Apply without AutoApprove in the test environment. Its
// clock moves on only while no activity runs, so an hour after the start the
// run has previewed and waits (the default approval timeout is 24 h).
type waitingRun struct {
	h   *harness
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment
	in  runspec.RunInput
	// sent and checked count answers, to make sure each was checked.
	sent, checked int
}

func newWaitingRun(h *harness, spec *engine.Spec) *waitingRun {
	h.runs++
	env := h.NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: fmt.Sprintf("kumo/p/w/%d", h.runs)})
	activities.Register(env, h.acts)
	Register(env)
	hash, err := h.backend.PutSpec(context.Background(), spec)
	if err != nil {
		h.t.Fatal(err)
	}
	return &waitingRun{h: h, t: h.t, env: env, in: runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, Parallelism: 3}}
}

// whileWaiting calls act an hour into the run, when it must await approval.
func (w *waitingRun) whileWaiting(act func(p runspec.Progress)) {
	w.env.RegisterDelayedCallback(func() {
		p := w.progress()
		if p.Stage != runspec.StageApproval {
			w.t.Errorf("an hour in, the run is %s, want %s", p.Stage, runspec.StageApproval)
		}
		act(p)
	}, time.Hour)
}

func (w *waitingRun) progress() runspec.Progress {
	v, err := w.env.QueryWorkflow(runspec.ProgressQuery)
	if err != nil {
		w.t.Fatalf("progress query: %v", err)
	}
	var p runspec.Progress
	if err := v.Get(&p); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// answer sends ApproveUpdate; check gets its answer, or the validator's or
// handler's refusal, once the environment has processed it.
func (w *waitingRun) answer(req runspec.ApprovalRequest, check func(runspec.ApprovalAnswer, error)) {
	w.sent++
	w.env.UpdateWorkflow(runspec.ApproveUpdate, fmt.Sprintf("answer-%d", w.sent), &testsuite.TestUpdateCallback{
		OnAccept: func() {},
		OnReject: func(err error) { w.checked++; check(runspec.ApprovalAnswer{}, err) },
		OnComplete: func(v any, err error) {
			w.checked++
			answer, _ := v.(runspec.ApprovalAnswer)
			check(answer, err)
		},
	}, req)
}

// finish runs the workflow to its end.
func (w *waitingRun) finish() (runspec.Result, error) {
	w.env.ExecuteWorkflow(Apply, w.in)
	if !w.env.IsWorkflowCompleted() {
		w.t.Fatal("workflow did not complete")
	}
	if w.checked != w.sent {
		w.t.Errorf("%d answers sent, %d came back", w.sent, w.checked)
	}
	var res runspec.Result
	err := w.env.GetWorkflowError()
	if err == nil {
		err = w.env.GetWorkflowResult(&res)
		return res, err
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		_ = app.Details(&res)
	}
	return res, err
}

// failedUnapplied checks that the run failed with msg in its release, and
// changed nothing.
func (w *waitingRun) failedUnapplied(res runspec.Result, err error, msg string) {
	w.t.Helper()
	if err == nil || !strings.Contains(err.Error(), msg) || res.Phase != engine.PhaseFailed || !strings.Contains(res.Error, msg) {
		w.t.Errorf("run ended %s %q (%v), want failed with %q", res.Phase, res.Error, err, msg)
	}
	rel, rerr := w.h.backend.GetRelease(context.Background(), "p", "w", res.Revision)
	if rerr != nil {
		w.t.Fatal(rerr)
	}
	if rel.Phase != engine.PhaseFailed || !strings.Contains(rel.Error, msg) {
		w.t.Errorf("release %s %q, want failed with %q", rel.Phase, rel.Error, msg)
	}
	if len(w.h.rt.applied) != 0 {
		w.t.Errorf("applied %v, want nothing", w.h.rt.applied)
	}
}

func twoConfigMaps() *engine.Spec {
	return &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a")}}
}

// TestApproveUpdateIsBoundToThePlanDigest: while the run waits its release is
// awaiting-approval; an approval for another digest is refused and the run
// still waits; an approval naming the plan's digest (a 12-digit prefix will do)
// is accepted and the run applies; a second answer is refused.
func TestApproveUpdateIsBoundToThePlanDigest(t *testing.T) {
	h := newHarness(t)
	w := newWaitingRun(h, twoConfigMaps())
	w.whileWaiting(func(p runspec.Progress) {
		if want := engine.PlanDigest(p.Changes); p.Digest != want || p.Approval == nil || p.Approval.Digest != want {
			t.Errorf("progress digest %q, approval %+v; want %s", p.Digest, p.Approval, want)
		}
		if p.Approval != nil && p.Approval.Deadline.Sub(w.env.Now()) <= 22*time.Hour {
			t.Errorf("deadline %s, want a day after the wait began (now %s)", p.Approval.Deadline, w.env.Now())
		}
		rel, err := h.backend.GetRelease(context.Background(), "p", "w", 1)
		if err != nil || rel.Phase != engine.PhaseAwaitingApproval {
			t.Errorf("release while waiting: %v, %v; want %s", rel, err, engine.PhaseAwaitingApproval)
		}
		other := engine.PlanDigest(p.Changes[:1])
		w.answer(runspec.ApprovalRequest{Approve: true, Digest: other}, func(_ runspec.ApprovalAnswer, err error) {
			if err == nil || !strings.Contains(err.Error(), "does not match the plan awaiting approval") {
				t.Errorf("approval of another plan: %v, want refused", err)
			}
		})
		w.env.RegisterDelayedCallback(func() {
			if p := w.progress(); p.Stage != runspec.StageApproval || p.Approval.Answer != nil {
				t.Errorf("after a refused approval the run is %s (answer %+v), want still waiting", p.Stage, p.Approval.Answer)
			}
			w.answer(runspec.ApprovalRequest{Approve: true, Digest: p.Digest[:len("sha256:")+12], By: "alice"}, func(answer runspec.ApprovalAnswer, err error) {
				if err != nil || answer.Digest != p.Digest || answer.Revision != 1 {
					t.Errorf("approval: %+v, %v", answer, err)
				}
			})
			w.answer(runspec.ApprovalRequest{Reason: "too late"}, func(_ runspec.ApprovalAnswer, err error) {
				if err == nil || !strings.Contains(err.Error(), "already approved") {
					t.Errorf("a second answer: %v, want refused", err)
				}
			})
		}, time.Minute)
	})
	res, err := w.finish()
	if err != nil || res.Phase != engine.PhaseSucceeded || res.Digest == "" {
		t.Fatalf("approved run: %+v, %v", res, err)
	}
	if got := strings.Join(h.rt.applied, ","); got != "v1:ConfigMap:ns:a,v1:ConfigMap:ns:b" {
		t.Errorf("applied %s", got)
	}
}

func TestRejectedRunFailsWithTheReasonAndAppliesNothing(t *testing.T) {
	h := newHarness(t)
	w := newWaitingRun(h, twoConfigMaps())
	w.whileWaiting(func(runspec.Progress) {
		w.answer(runspec.ApprovalRequest{Reason: "not on a Friday", By: "bob"}, func(_ runspec.ApprovalAnswer, err error) {
			if err != nil {
				t.Errorf("rejection refused: %v", err)
			}
		})
		w.answer(runspec.ApprovalRequest{Approve: true}, func(_ runspec.ApprovalAnswer, err error) {
			if err == nil || !strings.Contains(err.Error(), "already rejected") {
				t.Errorf("approval after the rejection: %v, want refused", err)
			}
		})
	})
	res, err := w.finish()
	// No kumo frontend stamped the request: the name the client sent is all
	// the run knows, and it says so.
	w.failedUnapplied(res, err, "rejected by bob (unverified): not on a Friday")
	if res.Status != runspec.StatusCancelled {
		t.Errorf("a rejected run ends %q, want %q (as a cancel by the user)", res.Status, runspec.StatusCancelled)
	}
}

// TestUnansweredRunFailsAtItsApprovalTimeout: the environment skips the wait.
func TestUnansweredRunFailsAtItsApprovalTimeout(t *testing.T) {
	h := newHarness(t)
	w := newWaitingRun(h, twoConfigMaps())
	w.in.ApprovalTimeout = 10 * time.Minute
	start := w.env.Now()
	res, err := w.finish()
	w.failedUnapplied(res, err, "not approved within 10m0s")
	if waited := w.env.Now().Sub(start); waited < 10*time.Minute || waited > time.Hour {
		t.Errorf("the run gave up after %s of workflow time, want the 10 minutes it was given", waited)
	}
}

// TestPlanChangedBeforeTheApprovalIsStale: a resource the plan creates appears
// live while the run waits; the approved plan no longer holds, and the run
// fails naming the difference instead of applying.
func TestPlanChangedBeforeTheApprovalIsStale(t *testing.T) {
	h := newHarness(t)
	w := newWaitingRun(h, twoConfigMaps())
	w.whileWaiting(func(runspec.Progress) {
		h.rt.mu.Lock()
		h.rt.objects["v1:ConfigMap:ns:b"] = cm("b").Attributes
		h.rt.mu.Unlock()
		w.answer(runspec.ApprovalRequest{Approve: true}, func(_ runspec.ApprovalAnswer, err error) {
			if err != nil {
				t.Errorf("approval refused: %v", err)
			}
		})
	})
	res, err := w.finish()
	w.failedUnapplied(res, err, "plan is stale: approved 2 to create")
	if !strings.Contains(res.Error, "now 1 to create") || !strings.Contains(res.Error, "v1:ConfigMap:ns:b: approved Create, now Adopt") {
		t.Errorf("stale message does not say what changed: %s", res.Error)
	}
}

// TestUnchangedPlanNeedsNoApproval: nothing to approve, nothing to wait for.
func TestUnchangedPlanNeedsNoApproval(t *testing.T) {
	h := newHarness(t)
	if _, err := h.run(Apply, twoConfigMaps()); err != nil {
		t.Fatal(err)
	}
	w := newWaitingRun(h, twoConfigMaps())
	start := w.env.Now()
	res, err := w.finish()
	if err != nil || res.Phase != engine.PhaseSucceeded {
		t.Fatalf("unchanged apply: %+v, %v", res, err)
	}
	if waited := w.env.Now().Sub(start); waited > time.Minute {
		t.Errorf("an unchanged apply waited %s", waited)
	}
}

// TestCancelWhileAwaitingApprovalStopsTheWait: `kumo run cancel` (the reason,
// then Temporal's cancel request) ends a run waiting for an answer at once; its
// release fails with the reason, nothing is applied, and the run takes no
// answer any more.
func TestCancelWhileAwaitingApprovalStopsTheWait(t *testing.T) {
	h := newHarness(t)
	w := newWaitingRun(h, twoConfigMaps())
	start := w.env.Now()
	w.whileWaiting(func(runspec.Progress) {
		w.env.SignalWorkflow(runspec.CancelSignal, runspec.Cancel{Reason: "wrong stack"})
		w.env.CancelWorkflow()
		w.answer(runspec.ApprovalRequest{Approve: true}, func(_ runspec.ApprovalAnswer, err error) {
			if err == nil || !strings.Contains(err.Error(), "not awaiting approval") {
				t.Errorf("approval after the cancel: %v, want refused", err)
			}
		})
	})
	_, err := w.finish()
	var cancelled *temporal.CanceledError
	if !errors.As(err, &cancelled) {
		t.Errorf("run error %v, want cancelled", err)
	}
	if waited := w.env.Now().Sub(start); waited > 2*time.Hour {
		t.Errorf("the cancelled run went on waiting for %s", waited)
	}
	h.assertReleaseFailedUnapplied("cancelled: wrong stack")
}
