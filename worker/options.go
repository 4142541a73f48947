package worker

import "time"

// Options tune a worker that outlives one run.
type Options struct {
	// StopTimeout is how long Stop waits for activities in flight to finish
	// (they see the worker stopping through activity.GetWorkerStopChannel and
	// keep heartbeating) before cancelling them. An activity that does not
	// finish is retried by whichever worker polls next, once its heartbeat or
	// start-to-close timeout expires. Zero cancels them at once.
	StopTimeout time.Duration
}
