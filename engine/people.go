package engine

import "time"

// Actor is someone who did something to a run (started, approved, rejected
// or cancelled it), as the run recorded them: the subject the kumo frontend
// authenticated, or, when the request reached the run without one, the name
// the client sent, marked unverified.
type Actor struct {
	Name string `json:"name"`
	// Verified is true when the name is the authenticated subject; false for
	// a name the client sent, which anyone could have typed.
	Verified bool      `json:"verified"`
	Time     time.Time `json:"time,omitzero"`
	// Reason is what they said (a rejection's or a cancel's reason).
	Reason string `json:"reason,omitempty"`
}

// String is the actor's name as shown: "local:alice", or "alice@host
// (unverified)" for a name no one vouched for.
func (a Actor) String() string { return DisplayName(a.Name, a.Verified) }

// DisplayName shows a subject's name, marked when it is not verified.
func DisplayName(name string, verified bool) string {
	if name == "" {
		name = "unknown"
	}
	if !verified {
		return name + " (unverified)"
	}
	return name
}

// People are who started a run and who answered or stopped it, recorded in
// its release.
type People struct {
	StartedBy *Actor `json:"startedBy,omitempty"`
	// Approvals are the accepted approvals, in the order they came.
	Approvals   []Actor `json:"approvals,omitempty"`
	RejectedBy  *Actor  `json:"rejectedBy,omitempty"`
	CancelledBy *Actor  `json:"cancelledBy,omitempty"`
}

// Empty reports whether nobody is recorded.
func (p People) Empty() bool {
	return p.StartedBy == nil && len(p.Approvals) == 0 && p.RejectedBy == nil && p.CancelledBy == nil
}

// Merge adds what q records and p does not: a run's records only grow (an
// approval recorded when the run went on is kept when it ends).
func (p People) Merge(q People) People {
	if p.StartedBy == nil {
		p.StartedBy = q.StartedBy
	}
	if len(q.Approvals) > len(p.Approvals) {
		p.Approvals = q.Approvals
	}
	if p.RejectedBy == nil {
		p.RejectedBy = q.RejectedBy
	}
	if p.CancelledBy == nil {
		p.CancelledBy = q.CancelledBy
	}
	return p
}

// Lines say who did what and when, one line each, in the order it happened:
// "started by local:alice at 2026-11-25T18:00:00Z".
func (p People) Lines() []string {
	var out []string
	add := func(verb string, a *Actor) {
		if a == nil {
			return
		}
		line := verb + " by " + a.String()
		if !a.Time.IsZero() {
			line += " at " + a.Time.UTC().Format(time.RFC3339)
		}
		if a.Reason != "" {
			line += ": " + a.Reason
		}
		out = append(out, line)
	}
	add("started", p.StartedBy)
	for i := range p.Approvals {
		add("approved", &p.Approvals[i])
	}
	add("rejected", p.RejectedBy)
	add("cancelled", p.CancelledBy)
	return out
}
