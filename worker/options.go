package worker

import (
	"time"

	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/notify"
	"github.com/kumoproj/kumo/engine/planpolicy"
)

// Options tune a worker that outlives one run.
type Options struct {
	// StopTimeout is how long Stop waits for activities in flight to finish
	// (they see the worker stopping through activity.GetWorkerStopChannel and
	// keep heartbeating) before cancelling them. An activity that does not
	// finish is retried by whichever worker polls next, once its heartbeat or
	// start-to-close timeout expires. Zero cancels them at once.
	StopTimeout time.Duration
	// Generation is the operator's policy for generating from stacks: the
	// roots stack directories must lie under (--stack-root) and the
	// directories whose generators every workspace trusts. Its zero value
	// reads no stack.
	Generation generate.Policy
	// Events is the operator's event configuration (--events): sinks every
	// workspace's events also go to, and what sink URLs may be.
	Events notify.Operator
	// Policies are the operator's server-wide plan policies (--plan-policies
	// FILE), checked on every plan before the workspace's own; nil: none.
	Policies *planpolicy.Set
}
