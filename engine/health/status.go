package health

import "fmt"

// Status is how an object is doing.
type Status string

// The statuses, from best to worst (see Worse).
const (
	// Healthy: the object does what it was asked to (all replicas available, Job
	// complete, claim bound), or its kind has nothing to wait for.
	Healthy Status = "Healthy"
	// Suspended: paused on purpose (a paused Deployment, a suspended Job).
	Suspended Status = "Suspended"
	// Progressing: not there yet, but may still get there.
	Progressing Status = "Progressing"
	// Missing: the object does not exist.
	Missing Status = "Missing"
	// Degraded: failed, or will not get there without a change (progress
	// deadline exceeded, crash loop, image pull back-off, Job failed).
	Degraded Status = "Degraded"
	// Unknown: the status could not be assessed (malformed status).
	Unknown Status = "Unknown"
)

var rank = map[Status]int{Healthy: 0, Suspended: 1, Progressing: 2, Missing: 3, Degraded: 4, Unknown: 5}

// Worse reports whether s is worse than other. A status outside the six counts
// as Unknown.
func (s Status) Worse(other Status) bool { return s.rank() > other.rank() }

func (s Status) rank() int {
	if r, ok := rank[s]; ok {
		return r
	}
	return rank[Unknown]
}

// Result is the health of one object.
type Result struct {
	Status Status `json:"status"`
	// Message says why, in one line: "2/3 replicas available",
	// `Back-off pulling image "x"`. May be empty.
	Message string `json:"message,omitempty"`
	// Reason is a machine-readable cause where one is known, mostly for Degraded:
	// the condition or container reason (ProgressDeadlineExceeded,
	// CrashLoopBackOff, ImagePullBackOff, BackoffLimitExceeded, ...).
	Reason string `json:"reason,omitempty"`
}

// String renders "Status: message" (or just the status).
func (r Result) String() string {
	if r.Message == "" {
		return string(r.Status)
	}
	return fmt.Sprintf("%s: %s", r.Status, r.Message)
}

// Worst returns the worst of results (the first one among equals); Healthy for
// none. An aggregate of many objects is as healthy as its least healthy part.
func Worst(results ...Result) Result {
	worst := Result{Status: Healthy}
	for i, r := range results {
		if i == 0 || r.Status.Worse(worst.Status) {
			worst = r
		}
	}
	return worst
}

func result(s Status, format string, args ...any) Result {
	return Result{Status: s, Message: fmt.Sprintf(format, args...)}
}
