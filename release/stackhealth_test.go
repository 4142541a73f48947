package release

import (
	"testing"

	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
)

// TestStackHealth: the stack's line states the stack's health; when it is
// not Healthy it names the object that makes it so, and it never shows a
// healthy resource's message as the stack's.
func TestStackHealth(t *testing.T) {
	healthy := func(id, msg string) runtime.StatusNode {
		return runtime.StatusNode{ID: id, Health: health.Result{Status: health.Healthy, Message: msg}}
	}
	web := "apps/v1:Deployment:demo:web"
	pod := "v1:Pod:demo:web-1"
	for _, c := range []struct {
		name  string
		nodes []runtime.StatusNode
		want  health.Result
	}{
		{"no resources", nil, health.Result{Status: health.Healthy}},
		{"all healthy", []runtime.StatusNode{healthy("argocd/default", "established"), healthy(web, "")}, health.Result{Status: health.Healthy}},
		{"a degraded resource", []runtime.StatusNode{healthy("ns", "established"),
			{ID: web, Health: health.Result{Status: health.Degraded, Message: "deadline exceeded", Reason: "ProgressDeadlineExceeded"}}},
			health.Result{Status: health.Degraded, Message: web + ": deadline exceeded", Reason: "ProgressDeadlineExceeded"}},
		{"an owned object, first among equals", []runtime.StatusNode{
			{ID: web, Health: health.Result{Status: health.Progressing, Message: "1/2 replicas available"}, Children: []runtime.StatusNode{
				{ID: pod, Health: health.Result{Status: health.Degraded, Reason: "CrashLoopBackOff"}}}},
			{ID: "v1:Service:demo:web", Health: health.Result{Status: health.Degraded, Message: "no endpoints"}}},
			health.Result{Status: health.Degraded, Message: pod, Reason: "CrashLoopBackOff"}},
	} {
		if got := stackHealth(c.nodes); got != c.want {
			t.Errorf("%s: stack health %+v, want %+v", c.name, got, c.want)
		}
	}
}
