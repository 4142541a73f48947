package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// WaitProgress is what WaitResource heartbeats (runspec.WaitProgress).
type WaitProgress = runspec.WaitProgress

// WaitResource waits until one applied resource is healthy
// (release.Manager.Wait), watching it rather than polling. It heartbeats the
// health seen, at each change and every heartbeatEvery, so a crashed worker's
// wait is retried within the heartbeat timeout and resumes watching with the
// same deadline.
func (a *Activities) WaitResource(ctx context.Context, in NodeInput) (WaitResult, error) {
	p := WaitProgress{ID: in.ID, Since: time.Now()}
	var prev WaitProgress
	if lastHeartbeat(ctx, &prev) && !prev.Since.IsZero() {
		p = prev
	}
	var (
		mu  sync.Mutex
		out WaitResult
	)
	current := func() any {
		mu.Lock()
		defer mu.Unlock()
		return p
	}
	beat := func() {
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, current())
		}
	}
	beat()
	defer heartbeatWith(ctx, current)()
	h, err := a.m.Wait(ctx, release.Node(in), p.Since, func(h health.Result) {
		mu.Lock()
		p.Health = h
		out.Transitions = append(out.Transitions, h)
		mu.Unlock()
		beat()
	})
	if err != nil {
		return WaitResult{}, temporalError(err)
	}
	mu.Lock()
	defer mu.Unlock()
	out.Health = h
	return out, nil
}

// WaitBatchProgress is what WaitResources heartbeats (runspec.WaitBatchProgress).
type WaitBatchProgress = runspec.WaitBatchProgress

// WaitBatchResult is how each resource's wait of a WaitResources ended, in
// the order of its IDs: its health, or why it failed (Errors[k], its own
// failure; the others went on).
type WaitBatchResult struct {
	Waits  []WaitResult `json:"waits"`
	Errors []string     `json:"errors,omitempty"`
}

// WaitResources waits until several applied resources are healthy, all at
// once (release.Manager.WaitAll), as WaitResource waits for one: it
// heartbeats the health of each not healthy yet, and a retried attempt keeps
// the first attempt's deadline. A resource that fails fails alone; a failure
// that is not a resource's own (the cluster cannot be reached) fails the
// step, and Temporal retries it.
func (a *Activities) WaitResources(ctx context.Context, in BatchInput) (WaitBatchResult, error) {
	p := WaitBatchProgress{Since: time.Now()}
	var prev WaitBatchProgress
	if lastHeartbeat(ctx, &prev) && !prev.Since.IsZero() {
		p.Since = prev.Since
	}
	nodes := in.nodes()
	p.Nodes = make([]WaitProgress, len(nodes))
	out := WaitBatchResult{Waits: make([]WaitResult, len(nodes))}
	for k, n := range nodes {
		p.Nodes[k] = WaitProgress{ID: n.ID, Since: p.Since}
	}
	var mu sync.Mutex
	current := func() any {
		mu.Lock()
		defer mu.Unlock()
		// Only the resources still waiting: a client shows them live.
		waiting := WaitBatchProgress{Since: p.Since}
		for _, w := range p.Nodes {
			if w.Health.Status != health.Healthy {
				waiting.Nodes = append(waiting.Nodes, w)
			}
		}
		return waiting
	}
	if activity.IsActivity(ctx) {
		// At once: a retry after a crash before the first tick keeps Since.
		activity.RecordHeartbeat(ctx, current())
	}
	defer heartbeatWith(ctx, current)()
	healths, errs, err := a.m.WaitAll(ctx, nodes, p.Since, func(k int, h health.Result) {
		mu.Lock()
		defer mu.Unlock()
		p.Nodes[k].Health = h
		out.Waits[k].Transitions = append(out.Waits[k].Transitions, h)
	})
	if err != nil {
		return WaitBatchResult{}, temporalError(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for k := range nodes {
		out.Waits[k].Health = healths[k]
		if errs[k] != nil {
			if out.Errors == nil {
				out.Errors = make([]string, len(nodes))
			}
			out.Errors[k] = errs[k].Error()
		}
	}
	return out, nil
}
