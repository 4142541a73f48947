package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
)

// Waiter is implemented by runtimes that can wait for an applied resource to
// become healthy (Kubernetes: a Deployment's replicas available, a Job
// complete). Runtimes without it have nothing to wait for: a resource is
// healthy once applied.
type Waiter interface {
	// WaitHealthy follows res until it is Healthy (or Suspended: paused on
	// purpose) and returns that health. opts.Progress sees every change on the way.
	//
	// It fails fast with a *HealthError when res turns Degraded (a crash loop
	// only past opts.CrashLoopRestarts), and with a *HealthError whose TimedOut
	// is set when opts.Timeout (counted from opts.Since) or ctx's deadline passes
	// first; both are marked Permanent. When ctx is cancelled it returns ctx's
	// error. It is idempotent: a retry after a crash simply follows res again
	// (pass the first attempt's start as Since to keep the timeout).
	WaitHealthy(ctx context.Context, res *engine.Resource, opts WaitOptions) (health.Result, error)
}

// DefaultCrashLoopRestarts is how many restarts a crash-looping container may
// have before a wait gives up on it, when WaitOptions.CrashLoopRestarts is 0.
const DefaultCrashLoopRestarts = 3

// WaitOptions tune one WaitHealthy.
type WaitOptions struct {
	// Timeout bounds the wait, counted from Since; 0 leaves it to ctx's deadline.
	Timeout time.Duration
	// Since is when waiting for this resource began (zero: now). A wait resumed
	// after a crash passes the original start, so the timeout still holds.
	Since time.Time
	// CrashLoopRestarts: a container in CrashLoopBackOff (of the Pod, or of a
	// Pod of the workload waited for) fails the wait once it has restarted more
	// than this many times; 0 means DefaultCrashLoopRestarts, negative at once.
	CrashLoopRestarts int
	// Progress, if set, is called with the first health seen and each time it
	// changes (status, message or reason), from the waiting goroutine.
	Progress func(health.Result)
	// Settled, if set, is called once with the object as the wait last read
	// it when the wait ends Healthy or Suspended (without managed fields, as
	// Read returns it), so a caller can keep it: it need not read it again.
	// A runtime that does not read the object leaves it uncalled.
	Settled func(live *engine.Resource)
}

// HealthError says why a wait failed: the resource, its last health, and, for a
// timeout, how long it was waited for.
type HealthError struct {
	ID       string
	Health   health.Result
	TimedOut bool
	Waited   time.Duration // with TimedOut: Timeout (or up to ctx's deadline)
}

// Error reads "apps/v1:Deployment:shop:web: Progressing for 5m0s: 1/3 replicas
// available" for a timeout, "<id>: Degraded: <message>" otherwise.
func (e *HealthError) Error() string {
	s := fmt.Sprintf("%s: %s", e.ID, e.Health.Status)
	if e.TimedOut {
		s += fmt.Sprintf(" for %v", e.Waited)
	}
	if e.Health.Message != "" {
		s += ": " + e.Health.Message
	}
	return s
}
