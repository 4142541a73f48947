package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kumoproj/kumo/engine/drift"
)

// The events of a run that changes a workspace (apply, destroy, rollback,
// remediate).
const (
	AwaitingApproval = "awaiting-approval"
	Succeeded        = "succeeded"
	Failed           = "failed"
	Cancelled        = "cancelled"
)

// Kinds are every event a sink may ask for: a run's, then a drift check's
// (drift.EventDetected... as drift webhooks have them).
var Kinds = []string{
	AwaitingApproval, Succeeded, Failed, Cancelled,
	drift.EventDetected, drift.EventResolved, drift.EventRemediationStarted,
	drift.EventRemediated, drift.EventRemediationFailed, drift.EventStuck,
}

// Event is one thing to tell a sink; a generic webhook receives it as JSON.
type Event struct {
	// ID is the same for every delivery of this event, retried or replayed
	// (EventID): a receiver drops one it has seen.
	ID    string `json:"id"`
	Event string `json:"event"`
	// Time is when the run reached the event (workflow time).
	Time      time.Time `json:"time"`
	Project   string    `json:"project"`
	Workspace string    `json:"workspace"`
	Stack     string    `json:"stack,omitempty"`
	// Operation is the run's (apply, destroy, rollback, remediate,
	// drift-check).
	Operation  string `json:"operation"`
	Revision   int    `json:"revision,omitempty"`
	WorkflowID string `json:"workflowID"`
	RunID      string `json:"runID"`
	// Summary says the event in one line, for people.
	Summary   string `json:"summary"`
	StartedBy string `json:"startedBy,omitempty"`
	// Plan is the plan's counts and digest (awaiting-approval, and the end of
	// a run that previewed).
	Plan *Plan `json:"plan,omitempty"`
	// Approve says how to approve (awaiting-approval).
	Approve *Approve `json:"approve,omitempty"`
	// Error is the run's first error (failed).
	Error string `json:"error,omitempty"`
	// CancelledBy is who cancelled the run and Reason why (cancelled).
	CancelledBy string `json:"cancelledBy,omitempty"`
	Reason      string `json:"reason,omitempty"`
	// Drift is the drift check's event, as a drift webhook receives it
	// (drift-*, remediation-*, remediated).
	Drift *drift.Event `json:"drift,omitempty"`
}

// Plan is a plan's counts and digest.
type Plan struct {
	Create int    `json:"create"`
	Update int    `json:"update"`
	Delete int    `json:"delete"`
	Adopt  int    `json:"adopt,omitempty"`
	Digest string `json:"digest"`
}

func (p Plan) String() string {
	s := fmt.Sprintf("%d to create, %d to update, %d to delete", p.Create, p.Update, p.Delete)
	if p.Adopt > 0 {
		s += fmt.Sprintf(", %d to adopt", p.Adopt)
	}
	return s
}

// Approve is how a run awaiting approval is approved.
type Approve struct {
	// Command approves it from any terminal, bound to the plan's digest.
	Command string `json:"command"`
	// URL approves it over kumo's HTTP API (POST, with the digest), when the
	// operator says where the API is served (Operator.APIURL).
	URL string `json:"url,omitempty"`
}

// EventID names the event kind of run runID of workflowID: the same on
// every retry of its POST and every replay of the run, and different for
// every other run and kind.
func EventID(workflowID, runID, kind string) string {
	h := sha256.Sum256([]byte(workflowID + "\x00" + runID + "\x00" + kind))
	return "kumo-" + hex.EncodeToString(h[:16])
}

// Run is what every event of a run says about it.
type Run struct {
	WorkflowID, RunID string
	Operation         string
	Project           string
	Workspace         string
	Stack             string
	Revision          int
	StartedBy         string
}

func (r Run) event(kind string, at time.Time, summary string) Event {
	return Event{
		ID: EventID(r.WorkflowID, r.RunID, kind), Event: kind, Time: at.UTC(),
		Project: r.Project, Workspace: r.Workspace, Stack: r.Stack, Operation: r.Operation, Revision: r.Revision,
		WorkflowID: r.WorkflowID, RunID: r.RunID, StartedBy: r.StartedBy, Summary: summary,
	}
}

// what is "apply shop/dev revision 4".
func (r Run) what() string {
	s := fmt.Sprintf("%s %s/%s", r.Operation, r.Project, r.Workspace)
	if r.Revision > 0 {
		s += fmt.Sprintf(" revision %d", r.Revision)
	}
	return s
}

// NewAwaitingApproval is the event of r waiting for its plan p to be
// approved, with the command that approves it.
func NewAwaitingApproval(r Run, p Plan, at time.Time) Event {
	e := r.event(AwaitingApproval, at, fmt.Sprintf("%s awaits approval: %s (plan %s)", r.what(), p, shortDigest(p.Digest)))
	e.Plan = &p
	e.Approve = &Approve{Command: fmt.Sprintf("kumo approve %s --project %s --workspace %s --digest %s", r.RunID, r.Project, r.Workspace, p.Digest)}
	return e
}

// WithApproveURL adds the HTTP API's approve URL under apiURL (the
// operator's APIURL) to an awaiting-approval event.
func (e Event) WithApproveURL(apiURL string) Event {
	if apiURL == "" || e.Approve == nil {
		return e
	}
	a := *e.Approve
	a.URL = strings.TrimRight(apiURL, "/") + "/api/v1/runs/" + url.PathEscape(e.RunID) + "/approve"
	e.Approve = &a
	return e
}

// NewSucceeded is the event of r succeeding; p is its plan when it made one.
func NewSucceeded(r Run, p *Plan, at time.Time) Event {
	s := r.what() + " succeeded"
	if p != nil {
		s += ": " + changed(*p)
	}
	e := r.event(Succeeded, at, s)
	e.Plan = p
	return e
}

// NewFailed is the event of r failing with runErr (its error message, which
// may list many resources' errors): the event carries the first.
func NewFailed(r Run, runErr string, p *Plan, at time.Time) Event {
	first := FirstError(runErr)
	e := r.event(Failed, at, r.what()+" failed: "+first)
	e.Error, e.Plan = first, p
	return e
}

// NewCancelled is the event of r cancelled by who (empty when the run
// cannot name them, as for a cancel from the Temporal Web UI), for reason.
func NewCancelled(r Run, who, reason string, at time.Time) Event {
	s := r.what() + " was cancelled"
	if who != "" {
		s += " by " + who
	}
	if reason != "" {
		s += ": " + reason
	}
	e := r.event(Cancelled, at, s)
	e.CancelledBy, e.Reason = who, reason
	return e
}

// FromDrift is drift check workflowID/runID's event d for a sink.
func FromDrift(workflowID, runID string, d drift.Event) Event {
	r := Run{WorkflowID: workflowID, RunID: runID, Operation: "drift-check", Project: d.Project, Workspace: d.Workspace,
		Stack: d.Stack, Revision: d.Revision}
	s := fmt.Sprintf("%s/%s %s: %s", d.Project, d.Workspace, d.Event, d.Summary)
	if st := d.Remediation; st != nil && st.Outcome != "" {
		s += fmt.Sprintf("; remediation %s", st.Outcome)
		if st.Error != "" {
			s += ": " + st.Error
		}
	}
	e := r.event(d.Event, d.CheckTime, s)
	e.Drift = &d
	return e
}

// maxError bounds the error an event carries: a receiver needs the cause,
// not every resource's.
const maxError = 1000

// FirstError is the first error of a run's error message: a run that failed
// for many resources lists them one a line under a heading ("apply failed
// for 3 resources:"), and the first is the one to look at first.
func FirstError(msg string) string {
	msg = strings.TrimSpace(msg)
	head, rest, many := strings.Cut(msg, "\n")
	if many && strings.HasSuffix(head, ":") {
		first, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
		msg = strings.TrimSuffix(head, ":") + ": " + strings.TrimSpace(first)
	} else {
		msg = head
	}
	return truncate(msg, maxError)
}

func changed(p Plan) string {
	s := fmt.Sprintf("%d created, %d updated, %d deleted", p.Create, p.Update, p.Delete)
	if p.Adopt > 0 {
		s += fmt.Sprintf(", %d adopted", p.Adopt)
	}
	return s
}

// shortDigest is a digest as kumo shows it ("sha256:" and 12 hex digits),
// which kumo approve --digest takes too.
func shortDigest(d string) string {
	const prefix, short = "sha256:", 12
	if strings.HasPrefix(d, prefix) && len(d) > len(prefix)+short {
		return d[:len(prefix)+short]
	}
	return d
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
