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
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// cancelDuring runs an Apply of a chain a <- b <- c <- d (parallelism 1) and
// cancels it, as `kumo run cancel` does, while b is being applied.
func cancelDuring(t *testing.T, rollbackOnFailure, temporalCancel bool) (*harness, runspec.Result, error) {
	h := newHarness(t)
	env := h.NewTestWorkflowEnvironment()
	// The activities run inside the workflow's task here; on a loaded machine
	// the first run of a test binary can take over the default second.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "kumo/p/w"})
	env.RegisterActivity(h.acts)
	Register(env)
	h.rt.onApply = func(id string) {
		if id != "v1:ConfigMap:ns:b" {
			return
		}
		env.SignalWorkflow(runspec.CancelSignal, runspec.Cancel{Reason: "stop it"})
		if temporalCancel {
			env.CancelWorkflow()
		}
	}
	spec := &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a"), cm("c", "v1:ConfigMap:ns:b"), cm("d", "v1:ConfigMap:ns:c")}}
	hash, err := h.backend.PutSpec(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	env.ExecuteWorkflow(Apply, runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true, Parallelism: 1, RollbackOnFailure: rollbackOnFailure})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	err = env.GetWorkflowError()
	var res runspec.Result
	var app *temporal.ApplicationError
	var cancelled *temporal.CanceledError
	switch {
	case errors.As(err, &cancelled):
		if err := cancelled.Details(&res); err != nil {
			t.Fatalf("details of %v: %v", err, err)
		}
	case errors.As(err, &app):
		if err := app.Details(&res); err != nil {
			t.Fatalf("details of %v: %v", err, err)
		}
	case err == nil:
		t.Fatal("the cancelled apply succeeded")
	}
	return h, res, err
}

// TestCancelLetsTheResourceInFlightFinishAndStartsNoOther: the resource being
// applied when the cancel comes is applied and recorded; none after it starts;
// the release fails with the reason.
func TestCancelLetsTheResourceInFlightFinishAndStartsNoOther(t *testing.T) {
	for _, temporalCancel := range []bool{true, false} {
		t.Run(fmt.Sprintf("temporal-cancel=%v", temporalCancel), func(t *testing.T) {
			h, res, err := cancelDuring(t, false, temporalCancel)
			var cancelled *temporal.CanceledError
			if temporalCancel != errors.As(err, &cancelled) {
				t.Errorf("error %T %v: a run cancelled through Temporal ends cancelled, one only signalled fails", err, err)
			}
			if got := strings.Join(h.rt.applied, ","); got != "v1:ConfigMap:ns:a,v1:ConfigMap:ns:b" {
				t.Errorf("applied %s, want a and b (in flight when cancelled), not c or d", got)
			}
			if res.Status != runspec.StatusCancelled || res.Phase != engine.PhaseFailed || res.Error != "cancelled: stop it" {
				t.Errorf("result status %q phase %q error %q", res.Status, res.Phase, res.Error)
			}
			rel, err := h.backend.GetRelease(context.Background(), "p", "w", 1)
			if err != nil {
				t.Fatal(err)
			}
			if rel.Phase != engine.PhaseFailed || rel.Error != "cancelled: stop it" {
				t.Errorf("release %s %q, want failed with the reason", rel.Phase, rel.Error)
			}
			var ids []string
			for _, r := range rel.State.Resources {
				ids = append(ids, r.ID)
			}
			if got := strings.Join(ids, ","); got != "v1:ConfigMap:ns:a,v1:ConfigMap:ns:b" {
				t.Errorf("state %s, want a and b recorded", got)
			}
		})
	}
}

// TestCancelWithRollbackOnFailureUndoesTheApply: a cancelled apply started with
// RollbackOnFailure puts back what it changed, even when Temporal's cancel
// request came (the undo steps are not cancelled with the run).
func TestCancelWithRollbackOnFailureUndoesTheApply(t *testing.T) {
	h, res, _ := cancelDuring(t, true, true)
	if len(h.rt.objects) != 0 {
		t.Errorf("left after the compensation: %v", h.rt.objects)
	}
	if res.Compensation == nil || len(res.Compensation.Resources) != 2 || len(res.Compensation.Errors) != 0 {
		t.Errorf("compensation %+v, want a and b undone", res.Compensation)
	}
	if res.Status != runspec.StatusCancelled || res.Error != "cancelled: stop it" {
		t.Errorf("result status %q error %q", res.Status, res.Error)
	}
}
