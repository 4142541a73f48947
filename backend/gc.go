package backend

import (
	"errors"
	"fmt"
	"time"
)

// Garbage collection of kumo's own records (Collect, store_gc.go). This file
// holds the policy and the decisions — what is expired, what has been
// unreferenced long enough — as plain functions of the records found and the
// time, so they are tested without any storage.
//
// Releases stay unless a history limit is set (Releases; 0, the default,
// keeps every revision): then each project/workspace keeps its newest
// Releases revisions, and more where a rollback or a run in flight needs them
// (history.go). The spec and the state chunks a kept revision names stay.
// What goes:
//
//   - with a history limit, the older revisions (their release files and
//     leftover state directories), at once: the floor raised first
//     (store_floor.go) hides them from every reader, and what only they named
//     becomes unreferenced;
//   - specs no release names, and state chunks of a workspace no release of it
//     names (left by a create that lost a revision race, or by a preview), once
//     they have been seen unreferenced for Grace (a copy stays readable in
//     Collect's trash for another Grace: store_trash.go);
//   - the per-resource state directory of a release that is final (its entries
//     were folded into the release; a crash between the two left them), once
//     seen so for Grace;
//   - run logs RunLogs after they were first seen;
//   - drift reports older than DriftReports, except each stack's newest;
//   - idempotency records older than Requests;
//   - audit days older than Audit, only when Audit is set.
//
// Object ages are not asked of the drivers (a Terraform http state service
// cannot tell them): Collect keeps a record of when each candidate was first
// seen (gcMarksKey), so an object becomes removable only after two passes at
// least Grace apart have both found it unreferenced.

// GCPolicy says how long kumo keeps its per-run records.
type GCPolicy struct {
	// RunLogs is how long a run's log is kept after Collect first saw it.
	RunLogs time.Duration `json:"runLogs"`
	// DriftReports is how long a drift report is kept after its check; the
	// newest report of each stack is always kept.
	DriftReports time.Duration `json:"driftReports"`
	// Requests is the idempotency window: how long an Idempotency-Key is
	// remembered after the request that used it.
	Requests time.Duration `json:"requests"`
	// Audit is how long audit entries are kept, by whole days (0: forever,
	// the default: removing audit entries takes an explicit setting).
	Audit time.Duration `json:"audit,omitempty"`
	// Grace is how long an unreferenced spec, state chunk or leftover state
	// directory must have been seen unreferenced before it is removed: longer
	// than any run takes between writing one and the release naming it.
	Grace time.Duration `json:"grace"`
	// Releases is the release history limit: how many revisions of each
	// project/workspace are kept, the newest (0: every revision, the default:
	// removing releases takes an explicit setting; else at least
	// MinReleaseRetention).
	Releases int `json:"releases,omitempty"`
}

// ValidateReleaseRetention refuses a release history limit that is negative
// or 1.
func ValidateReleaseRetention(n int) error {
	if n < 0 || n > 0 && n < MinReleaseRetention {
		return fmt.Errorf("must be 0 (keep every revision) or at least %d, so that the latest revision and the one before it, which a rollback and a run in flight read, stay", MinReleaseRetention)
	}
	return nil
}

// Defaults of GCPolicy (kumo server's flags document them).
const (
	DefaultRunLogRetention  = 30 * 24 * time.Hour
	DefaultDriftRetention   = 30 * 24 * time.Hour
	DefaultRequestRetention = 24 * time.Hour
	DefaultGCGrace          = time.Hour
	MinGCGrace              = 10 * time.Minute
	MinAuditRetention       = 24 * time.Hour
	minRecordRetention      = time.Minute
)

// DefaultGCPolicy is the policy of a kumo server started without retention flags.
func DefaultGCPolicy() GCPolicy {
	return GCPolicy{RunLogs: DefaultRunLogRetention, DriftReports: DefaultDriftRetention,
		Requests: DefaultRequestRetention, Grace: DefaultGCGrace}
}

// Validate refuses a policy that would remove records a run may still need:
// a grace shorter than MinGCGrace (a run writes a spec seconds before its
// release names it, but a busy worker may take minutes), retentions shorter
// than a minute or negative, an audit retention under a day, a release
// history limit that is negative or 1. It names the setting.
func (p GCPolicy) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		d    time.Duration
		min  time.Duration
	}{
		{"run log retention", p.RunLogs, max(minRecordRetention, p.Grace)},
		{"drift report retention", p.DriftReports, minRecordRetention},
		{"idempotency window", p.Requests, minRecordRetention},
		{"gc grace", p.Grace, MinGCGrace},
	} {
		if f.d < f.min {
			errs = append(errs, fmt.Errorf("%s %s: must be at least %s", f.name, f.d, f.min))
		}
	}
	if err := ValidateReleaseRetention(p.Releases); err != nil {
		errs = append(errs, fmt.Errorf("release history limit %d: %w", p.Releases, err))
	}
	if p.Audit != 0 && p.Audit < MinAuditRetention {
		errs = append(errs, fmt.Errorf("audit retention %s: must be 0 (keep forever) or at least %s", p.Audit, MinAuditRetention))
	}
	return errors.Join(errs...)
}

// gcMark is what Collect remembers of one candidate: when it first found it
// unreferenced (or, for a run log, first found it at all), and a signature
// of what it was then (a run log's parts): a candidate whose signature
// changed is seen anew.
type gcMark struct {
	Seen int64  `json:"seen"` // Unix seconds
	Sig  string `json:"sig,omitempty"`
}

// gcMarks are Collect's marks by key.
type gcMarks map[string]gcMark

// observe records that candidate key (with signature sig) was found at now,
// and returns since when it has been so.
func (m gcMarks) observe(key, sig string, now time.Time) time.Time {
	mk, ok := m[key]
	if !ok || mk.Sig != sig || mk.Seen > now.Unix() {
		mk = gcMark{Seen: now.Unix(), Sig: sig}
		m[key] = mk
	}
	return time.Unix(mk.Seen, 0)
}

// due says whether a candidate first seen at seen is removable at now after
// keep: only once keep has fully passed.
func due(seen, now time.Time, keep time.Duration) bool {
	return !now.Before(seen.Add(keep))
}

// keepOnly drops the marks of keys that are no longer candidates (referenced
// again, or removed), so the marks stay as small as the garbage.
func (m gcMarks) keepOnly(candidates map[string]bool) {
	for k := range m {
		if !candidates[k] {
			delete(m, k)
		}
	}
}

// driftExpired returns which of a stack's report names (oldest first, each
// starting with its check time in UnixNano) are older than keep at now; the
// newest is never among them.
func driftExpired(names []string, stamps []int64, now time.Time, keep time.Duration) []string {
	var out []string
	cutoff := now.Add(-keep).UnixNano()
	for i := 0; i < len(names)-1; i++ {
		if stamps[i] < cutoff {
			out = append(out, names[i])
		}
	}
	return out
}

// auditDayExpired says whether every entry of audit day folder day (UTC,
// auditDay) is older than keep at now. A folder whose name is not a day is
// never expired.
func auditDayExpired(day string, now time.Time, keep time.Duration) bool {
	t, err := time.Parse(auditDay, day)
	if err != nil || keep <= 0 {
		return false
	}
	return !t.Add(24 * time.Hour).After(now.Add(-keep))
}

// requestExpired says whether an idempotency record created at created is past
// the window at now. A record without a time is expired when first seen
// window ago (seen).
func requestExpired(created, seen, now time.Time, window time.Duration) bool {
	if created.IsZero() {
		return due(seen, now, window)
	}
	return !now.Before(created.Add(window))
}
