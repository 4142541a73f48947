package drift

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Modes of a drift check: warn only reports; remediate also re-applies the
// checked release when drift is found.
const (
	ModeWarn      = "warn"
	ModeRemediate = "remediate"
)

// ValidMode checks a mode ("" is warn).
func ValidMode(mode string) error {
	switch mode {
	case "", ModeWarn, ModeRemediate:
		return nil
	}
	return fmt.Errorf("unknown mode %q (want %s or %s)", mode, ModeWarn, ModeRemediate)
}

// Defaults of a Policy, Argo CD self-heal style: a growing wait between
// remediations, and a stop after DefaultLimit that did not clear the drift.
const (
	DefaultBackoff    = 5 * time.Minute
	DefaultMaxBackoff = time.Hour
	DefaultLimit      = 3
)

// Policy bounds remediation (the `drift.remediation` section).
type Policy struct {
	// Backoff is the wait after the first remediation before another one; it
	// doubles after each remediation that did not clear the drift, up to
	// MaxBackoff.
	Backoff    Duration `json:"backoff,omitempty"`
	MaxBackoff Duration `json:"maxBackoff,omitempty"`
	// Limit is how many remediations in a row may leave the stack drifted
	// before the check stops remediating and marks it stuck.
	Limit int `json:"limit,omitempty"`
	// Approval "required" makes each remediation wait for an approval, as an
	// apply without --yes does; "" (or "auto") applies at once.
	Approval string `json:"approval,omitempty"`
}

func (p Policy) validate() error {
	if p.Backoff < 0 || p.MaxBackoff < 0 || p.Limit < 0 {
		return errors.New("backoff, maxBackoff and limit must not be negative")
	}
	if p.Approval != "" && p.Approval != "auto" && p.Approval != "required" {
		return fmt.Errorf("approval %q: want auto or required", p.Approval)
	}
	return nil
}

// ApprovalRequired reports whether a remediation waits for an approval.
func (p Policy) ApprovalRequired() bool { return p.Approval == "required" }

func (p Policy) limit() int {
	if p.Limit > 0 {
		return p.Limit
	}
	return DefaultLimit
}

// backoff is the wait after the n-th remediation in a row (n >= 1).
func (p Policy) backoff(n int) time.Duration {
	d, capd := time.Duration(p.Backoff), time.Duration(p.MaxBackoff)
	if d <= 0 {
		d = DefaultBackoff
	}
	if capd <= 0 {
		capd = DefaultMaxBackoff
	}
	for i := 1; i < n && d < capd; i++ {
		d *= 2
	}
	return min(d, capd)
}

// What a remediate-mode check did about the drift it found.
const (
	// Remediating: this check starts a remediation.
	Remediating = "remediating"
	// BackingOff: the last remediation was too recent to start another.
	BackingOff = "backing-off"
	// Stuck: Limit remediations in a row left the stack drifted; the checks no
	// longer remediate until one finds it in sync (after a manual apply, say).
	Stuck = "drift-stuck"
)

// Outcomes of a remediation run.
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
	// OutcomeBusy: another apply or destroy held the stack; nothing was applied.
	OutcomeBusy = "busy"
)

// Remediation is the remediation state a report carries from check to check.
type Remediation struct {
	State string `json:"state"`
	// Attempts counts the remediations started since the stack was last found
	// in sync, this check's included.
	Attempts int `json:"attempts"`
	// Last is when the latest of them started; none starts before NextAllowed.
	Last        time.Time `json:"last,omitzero"`
	NextAllowed time.Time `json:"nextAllowed,omitzero"`
	// Of this check's remediation: the workflow, the revision it made, how it
	// ended.
	WorkflowID string `json:"workflowID,omitempty"`
	Revision   int    `json:"revision,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Remediable reports whether the report found something a re-apply repairs:
// a drifted or missing resource (one that could not be read is no reason).
func (r *Report) Remediable() bool { return r.Counts.Drifted+r.Counts.Missing > 0 }

// Decide sets r.Remediation for a remediate-mode check at r.CheckTime, from
// the previous report's state: nothing when there is nothing to remediate
// (the count starts again), stuck after p's limit, backing off while the last
// remediation is too recent, else remediating (and the next remediation is
// allowed one back-off later).
func (r *Report) Decide(prev *Report, p Policy) {
	r.Remediation = nil
	if !r.Remediable() {
		return
	}
	st := &Remediation{}
	if prev != nil && prev.Remediation != nil {
		st.Attempts, st.Last, st.NextAllowed = prev.Remediation.Attempts, prev.Remediation.Last, prev.Remediation.NextAllowed
	}
	switch {
	case st.Attempts >= p.limit():
		st.State = Stuck
	case r.CheckTime.Before(st.NextAllowed):
		st.State = BackingOff
	default:
		st.State = Remediating
		st.Attempts++
		st.Last = r.CheckTime
		st.NextAllowed = r.CheckTime.Add(p.backoff(st.Attempts))
	}
	r.Remediation = st
}

// Finish records how this check's remediation ended. A remediation that never
// ran (the stack was busy) does not count, nor delay the next.
func (st *Remediation) Finish(workflowID string, revision int, outcome, errMsg string) {
	st.WorkflowID, st.Revision, st.Outcome, st.Error = workflowID, revision, outcome, errMsg
	if outcome == OutcomeBusy {
		st.Attempts--
		st.NextAllowed = st.Last
	}
}

// Duration is a time.Duration written as "5m" in JSON and YAML.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"5m\": %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
