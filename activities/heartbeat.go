package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// heartbeatEvery is how often a long activity tells Temporal it is alive; the
// workflows' heartbeat timeouts are several times longer.
const heartbeatEvery = 2 * time.Second

// HeartbeatThrottle is the longest a worker holds back an activity's
// heartbeats (sdk worker.Options.MaxHeartbeatThrottleInterval; by default
// 80 % of the heartbeat timeout). A cancel reaches an activity only with the
// answer to a heartbeat, so it bounds how long a batch step runs on after
// its run was cancelled: about a second, as a cancel reaches a walk's local
// steps (workflows' localStepBudget). Each heartbeat sent is a write of the
// run's state on the server, and a large run keeps ten batches beating at
// once: four times a second, they were a good share of the CPU kumo spent on
// a large run (docs/performance.md). (A heartbeat call may take 1 s, or the
// throttle when longer, before the worker gives up on it and cancels the
// activity; a batch then fails and is retried after what it recorded, see
// cancelledByRun.) Every kumo worker sets it.
const HeartbeatThrottle = time.Second

// batchBeat is how often a batch step heartbeats, so the worker always has a
// heartbeat to send when HeartbeatThrottle allows.
const batchBeat = HeartbeatThrottle / 2

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
	return beatEvery(ctx, heartbeatEvery, details)
}

// beatEvery is heartbeatWith every interval.
func beatEvery(ctx context.Context, interval time.Duration, details func() any) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
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

// lastHeartbeat reads into details what the attempt before this one (of a
// retried activity) heartbeated last, to go on where it stopped; it reports
// whether there was such a heartbeat and it decoded.
func lastHeartbeat(ctx context.Context, details any) bool {
	if !activity.IsActivity(ctx) || !activity.HasHeartbeatDetails(ctx) {
		return false
	}
	return activity.GetHeartbeatDetails(ctx, details) == nil
}

// runID is the run an activity works for.
func runID(ctx context.Context) string {
	return activity.GetInfo(ctx).WorkflowExecution.RunID
}
