package drift

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Status is what a check found for one resource.
type Status string

const (
	InSync  Status = "in-sync"
	Drifted Status = "drifted"
	// Missing: the resource kumo recorded is gone.
	Missing Status = "missing"
	// Error: the resource could not be read or compared (RBAC, a deleted CRD, a
	// provider error). It never counts as in sync.
	Error Status = "error"
)

// Field is one difference between the recorded and the live resource.
type Field struct {
	// Path is a JSON pointer into the resource (/spec/replicas, /data/color).
	Path     string `json:"path"`
	Recorded any    `json:"recorded,omitempty"`
	Live     any    `json:"live,omitempty"`
	// Absent: the field is not in the live resource at all.
	Absent bool `json:"absent,omitempty"`
	// Manager is the Kubernetes field manager that owns the live value ("" when
	// nobody does, or for Terraform).
	Manager string `json:"manager,omitempty"`
	// IgnoredBy names the ignore rule that matched (the field is then listed
	// under Ignored, not Fields).
	IgnoredBy string `json:"ignoredBy,omitempty"`
}

// Result is one resource's outcome.
type Result struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status Status `json:"status"`
	// Fields are the drifted fields; Ignored the differences an ignore rule matched.
	Fields  []Field `json:"fields,omitempty"`
	Ignored []Field `json:"ignored,omitempty"`
	Error   string  `json:"error,omitempty"`
	// FirstSeen is the check time at which this resource was first found in its
	// current status (drifted, missing, error), and ConsecutiveChecks how many
	// checks in a row found it so, this one included: an old drift is told from
	// a new one.
	FirstSeen         time.Time `json:"firstSeen,omitzero"`
	ConsecutiveChecks int       `json:"consecutiveChecks,omitempty"`
}

// Counts are a report's totals. Ignored counts ignored differences, apart from
// the statuses (a resource whose only differences are ignored is in sync).
type Counts struct {
	Resources int `json:"resources"`
	InSync    int `json:"inSync"`
	Drifted   int `json:"drifted"`
	Missing   int `json:"missing"`
	Error     int `json:"error"`
	Ignored   int `json:"ignored"`
}

// Report is one drift check of a stack.
type Report struct {
	Project   string    `json:"project"`
	Workspace string    `json:"workspace"`
	Stack     string    `json:"stack,omitempty"`
	CheckTime time.Time `json:"checkTime"`
	// RunID is the check's run (the Temporal run ID); it names the stored report.
	RunID    string `json:"runID"`
	Revision int    `json:"revision"`
	// SpecHash is the checked revision's spec: what a remediation re-applies.
	SpecHash string `json:"specHash,omitempty"`
	Counts   Counts `json:"counts"`
	// Resources lists every resource that is not in sync, and in-sync ones with
	// ignored differences, by ID.
	Resources []Result `json:"resources,omitempty"`
	// Mode is the check's mode (ModeWarn when empty); Remediation what a
	// remediate-mode check did about the drift it found.
	Mode        string       `json:"mode,omitempty"`
	Remediation *Remediation `json:"remediation,omitempty"`
}

// Add records one resource's result in r: counted, and listed unless it is in
// sync with nothing ignored.
func (r *Report) Add(res Result) {
	r.Counts.Resources++
	r.Counts.Ignored += len(res.Ignored)
	switch res.Status {
	case InSync:
		r.Counts.InSync++
	case Drifted:
		r.Counts.Drifted++
	case Missing:
		r.Counts.Missing++
	default:
		r.Counts.Error++
	}
	if res.Status != InSync || len(res.Ignored) > 0 {
		r.Resources = append(r.Resources, res)
	}
}

// Sort orders the listed resources by ID, so reports compare and print stably.
func (r *Report) Sort() {
	slices.SortFunc(r.Resources, func(a, b Result) int { return strings.Compare(a.ID, b.ID) })
}

// Drifted reports whether anything is not in sync (drifted, missing or error).
func (r *Report) Drifted() bool { return r.Counts.Resources != r.Counts.InSync }

// ExitCode follows `terraform plan -detailed-exitcode`: 0 in sync, 2 drift
// found (drifted or missing), 1 when a resource could not be checked.
func (r *Report) ExitCode() int {
	switch {
	case r.Counts.Error > 0:
		return 1
	case r.Drifted():
		return 2
	}
	return 0
}

// Summary is the one-line account of the check:
// "drift shop/dev rev 7: 3 of 120 drifted, 1 missing".
func (r *Report) Summary() string {
	s := fmt.Sprintf("drift %s/%s rev %d: %d of %d drifted", r.Project, r.Workspace, r.Revision, r.Counts.Drifted, r.Counts.Resources)
	if r.Counts.Missing > 0 {
		s += fmt.Sprintf(", %d missing", r.Counts.Missing)
	}
	if r.Counts.Error > 0 {
		s += fmt.Sprintf(", %d error", r.Counts.Error)
	}
	if r.Counts.Ignored > 0 {
		s += fmt.Sprintf(", %d ignored", r.Counts.Ignored)
	}
	if st := r.Remediation; st != nil {
		switch st.State {
		case Remediating:
			s += fmt.Sprintf("; remediating (attempt %d)", st.Attempts)
		case BackingOff:
			s += fmt.Sprintf("; next remediation after %s", st.NextAllowed.UTC().Format(time.RFC3339))
		case Stuck:
			s += fmt.Sprintf("; %s after %d remediations", Stuck, st.Attempts)
		}
	}
	return s
}

// CarryOver sets FirstSeen and ConsecutiveChecks from the previous report of the
// same stack (nil: none): a resource found in the same status as last time
// keeps its first-seen time and counts one more check; any other starts at this
// check. In-sync resources carry nothing.
func (r *Report) CarryOver(prev *Report) {
	before := map[string]Result{}
	if prev != nil {
		for _, p := range prev.Resources {
			before[p.ID] = p
		}
	}
	for i := range r.Resources {
		res := &r.Resources[i]
		if res.Status == InSync {
			res.FirstSeen, res.ConsecutiveChecks = time.Time{}, 0
			continue
		}
		if p, ok := before[res.ID]; ok && p.Status == res.Status && p.ConsecutiveChecks > 0 {
			res.FirstSeen, res.ConsecutiveChecks = p.FirstSeen, p.ConsecutiveChecks+1
			continue
		}
		res.FirstSeen, res.ConsecutiveChecks = r.CheckTime, 1
	}
}
