package workflows

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// neverHealthy is fakeRuntime whose waits time out.
type neverHealthy struct {
	*fakeRuntime
	waited []string
}

func (n *neverHealthy) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return n, nil
}

func (n *neverHealthy) WaitHealthy(_ context.Context, r *engine.Resource, opts runtime.WaitOptions) (health.Result, error) {
	n.waited = append(n.waited, r.ID)
	h := health.Result{Status: health.Progressing, Message: "not ready"}
	return h, runtime.Permanent(&runtime.HealthError{ID: r.ID, Health: h, TimedOut: true, Waited: opts.Timeout})
}

// A node whose resource never becomes healthy fails with its health; its
// dependent never starts, and with RollbackOnFailure the applied resource is
// undone like any other, while a ConfigMap healthy once applied is not waited for.
func TestWaitThatTimesOutFailsAndCompensates(t *testing.T) {
	h := newHarness(t)
	rt := &neverHealthy{fakeRuntime: h.rt}
	h.acts = activities.New(h.backend, rt, notRunning{})
	h.rollbackOnFailure = true
	spec := &engine.Spec{Resources: []engine.Resource{cm("a"), notReady("slow", "v1:ConfigMap:ns:a"), cm("after", "v1:ConfigMap:ns:slow")}}
	_, err := h.run(Apply, spec)
	if err == nil || !strings.Contains(err.Error(), "v1:ConfigMap:ns:slow: Progressing for "+(5*time.Minute).String()+": not ready") {
		t.Fatalf("error %v, want the wait's timeout", err)
	}
	if !slices.Equal(rt.waited, []string{"v1:ConfigMap:ns:slow"}) {
		t.Errorf("waited for %v, want only the resource not healthy once applied", rt.waited)
	}
	if slices.Contains(rt.applied, "v1:ConfigMap:ns:after") {
		t.Errorf("the dependent was applied: %v", rt.applied)
	}
	for _, id := range []string{"v1:ConfigMap:ns:a", "v1:ConfigMap:ns:slow"} {
		if _, ok := rt.objects[id]; ok {
			t.Errorf("%s was not undone", id)
		}
	}
}
