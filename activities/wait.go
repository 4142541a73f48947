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
	if activity.IsActivity(ctx) && activity.HasHeartbeatDetails(ctx) {
		var prev WaitProgress
		if err := activity.GetHeartbeatDetails(ctx, &prev); err == nil && !prev.Since.IsZero() {
			p = prev
		}
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
