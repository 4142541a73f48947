package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// heartbeatEvery is how often a long activity tells Temporal it is alive; the
// workflows' heartbeat timeouts are several times longer.
const heartbeatEvery = 2 * time.Second

// heartbeat records a heartbeat every heartbeatEvery until stop is called, so a
// live worker's long call (a terraform apply, a delete waiting for the object
// to go, an external generator) is not timed out while a dead worker's is
// retried within seconds. Outside an activity it does nothing.
func heartbeat(ctx context.Context) (stop func()) {
	return heartbeatWith(ctx, nil)
}

// heartbeatWith is heartbeat recording what details returns (when not nil)
// with each heartbeat.
func heartbeatWith(ctx context.Context, details func() any) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if details != nil {
					activity.RecordHeartbeat(ctx, details())
				} else {
					activity.RecordHeartbeat(ctx)
				}
			}
		}
	}()
	return func() { close(done) }
}

// runID is the run an activity works for.
func runID(ctx context.Context) string {
	return activity.GetInfo(ctx).WorkflowExecution.RunID
}
