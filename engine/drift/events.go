package drift

import (
	"time"
)

// Event types a webhook receives: only changes of a stack's drift state, never
// one per unchanged check.
const (
	// EventDetected: resources that were in sync (or in another status) are
	// now drifted, missing or unreadable.
	EventDetected = "drift-detected"
	// EventResolved: the stack was not in sync at the last check and is now.
	EventResolved = "drift-resolved"
	// EventRemediationStarted, EventRemediated and EventRemediationFailed
	// follow one remediation run.
	EventRemediationStarted = "remediation-started"
	EventRemediated         = "remediated"
	EventRemediationFailed  = "remediation-failed"
	// EventStuck: the checks stopped remediating (see Stuck).
	EventStuck = "drift-stuck"
)

// MaxEventResources bounds the resources an Event lists.
const MaxEventResources = 50

// Event is the JSON body of a webhook POST.
type Event struct {
	Event     string    `json:"event"`
	Project   string    `json:"project"`
	Workspace string    `json:"workspace"`
	Stack     string    `json:"stack,omitempty"`
	Revision  int       `json:"revision"`
	Check     string    `json:"check"`
	CheckTime time.Time `json:"checkTime"`
	Summary   string    `json:"summary"`
	Counts    Counts    `json:"counts"`
	// Resources are the ones the event is about (for drift-detected, those
	// newly not in sync), at most MaxEventResources.
	Resources   []EventResource `json:"resources,omitempty"`
	Remediation *Remediation    `json:"remediation,omitempty"`
}

// EventResource is one resource an Event names.
type EventResource struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
}

// ID names the event for a receiver's deduplication: a retried POST carries
// the same one.
func (e Event) ID() string { return e.Check + "/" + e.Event }

// Events are the changes of drift state r found since prev (nil: none before):
// newly drifted resources, drift resolved, a remediation started, and the
// checks becoming stuck. How a remediation ended is RemediationEvent's.
func (r *Report) Events(prev *Report) []Event {
	var out []Event
	var fresh []EventResource
	for _, res := range r.Resources {
		if res.Status != InSync && res.ConsecutiveChecks == 1 && len(fresh) < MaxEventResources {
			fresh = append(fresh, EventResource{ID: res.ID, Status: res.Status})
		}
	}
	if len(fresh) > 0 {
		e := r.event(EventDetected)
		e.Resources = fresh
		out = append(out, e)
	}
	if prev != nil && prev.Drifted() && !r.Drifted() {
		out = append(out, r.event(EventResolved))
	}
	if st := r.Remediation; st != nil {
		switch {
		case st.State == Remediating:
			out = append(out, r.event(EventRemediationStarted))
		case st.State == Stuck && (prev == nil || prev.Remediation == nil || prev.Remediation.State != Stuck):
			out = append(out, r.event(EventStuck))
		}
	}
	return out
}

// RemediationEvent is the event of how this check's remediation ended; none
// when it never ran (the stack was busy).
func (r *Report) RemediationEvent() (Event, bool) {
	if r.Remediation == nil {
		return Event{}, false
	}
	switch r.Remediation.Outcome {
	case OutcomeSucceeded:
		return r.event(EventRemediated), true
	case OutcomeFailed:
		return r.event(EventRemediationFailed), true
	}
	return Event{}, false
}

func (r *Report) event(typ string) Event {
	return Event{
		Event: typ, Project: r.Project, Workspace: r.Workspace, Stack: r.Stack, Revision: r.Revision,
		Check: r.RunID, CheckTime: r.CheckTime, Summary: r.Summary(), Counts: r.Counts, Remediation: r.Remediation,
	}
}
