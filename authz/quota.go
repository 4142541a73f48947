package authz

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Quota bounds what one subject may start, so that one account (or one
// runaway CI job) cannot slow every other team's runs down: starts per
// minute, and runs in flight at once.
type Quota struct {
	// StartsPerMinute is how many runs a subject may start in any minute
	// (as a bucket that refills evenly); 0 means no limit.
	StartsPerMinute int
	// InFlight is how many of a subject's runs may be running at once; 0
	// means no limit.
	InFlight int
}

// DefaultQuota is what a shared server allows each subject unless the
// operator says otherwise: far above what a person or a pipeline starts, far
// below what floods a server.
var DefaultQuota = Quota{StartsPerMinute: 60, InFlight: 100}

// QuotaError says which limit a subject reached.
type QuotaError struct {
	Subject string
	// Limit names the limit: "starts per minute" or "runs in flight".
	Limit string
	Max   int
	// RetryAfter is when a start per minute frees up; 0 for runs in flight.
	RetryAfter time.Duration
}

func (e *QuotaError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("%s has reached its quota of %d %s; retry in %s", e.Subject, e.Max, e.Limit, e.RetryAfter.Round(time.Second))
	}
	return fmt.Sprintf("%s has reached its quota of %d %s; wait for one to finish", e.Subject, e.Max, e.Limit)
}

// InFlightCounter counts the runs a subject has running (a visibility query
// on the server that stamps each run with its starter).
type InFlightCounter func(ctx context.Context, subject string) (int, error)

// Limiter applies a Quota per subject. Its start buckets are in memory: a
// restarted server forgives the last minute, which bounds nothing worth
// keeping.
type Limiter struct {
	quota    Quota
	inFlight InFlightCounter
	now      func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewLimiter applies q; inFlight may be nil when q.InFlight is 0.
func NewLimiter(q Quota, inFlight InFlightCounter) *Limiter {
	return &Limiter{quota: q, inFlight: inFlight, now: time.Now, buckets: map[string]*bucket{}}
}

// Admit takes one start from subject's quota, or says which limit it reached.
// Runs in flight are counted first, so a start refused for them costs no
// start per minute.
func (l *Limiter) Admit(ctx context.Context, subject string) error {
	if limit := l.quota.InFlight; limit > 0 {
		if l.inFlight == nil {
			return fmt.Errorf("quota of %d runs in flight for %s: no way to count them (server misconfigured)", limit, subject)
		}
		n, err := l.inFlight(ctx, subject)
		if err != nil {
			return fmt.Errorf("count the runs in flight of %s for its quota: %w", subject, err)
		}
		if n >= limit {
			return &QuotaError{Subject: subject, Limit: "runs in flight", Max: limit}
		}
	}
	return l.takeStart(subject)
}

func (l *Limiter) takeStart(subject string) error {
	limit := l.quota.StartsPerMinute
	if limit <= 0 {
		return nil
	}
	rate := float64(limit) / float64(time.Minute)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[subject]
	if b == nil {
		b = &bucket{tokens: float64(limit), at: now}
		l.buckets[subject] = b
	}
	b.tokens = min(float64(limit), b.tokens+float64(now.Sub(b.at))*rate)
	b.at = now
	if b.tokens < 1 {
		wait := time.Duration((1 - b.tokens) / rate)
		return &QuotaError{Subject: subject, Limit: "starts per minute", Max: limit, RetryAfter: max(wait, time.Second)}
	}
	b.tokens--
	l.forgetIdle(now)
	return nil
}

// forgetIdle drops the buckets that have refilled, so that the map holds only
// subjects active in the last minute.
func (l *Limiter) forgetIdle(now time.Time) {
	if len(l.buckets) < 1024 {
		return
	}
	for s, b := range l.buckets {
		if now.Sub(b.at) > time.Minute {
			delete(l.buckets, s)
		}
	}
}
