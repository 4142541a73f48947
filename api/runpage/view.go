package runpage

import (
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// The view model: a run's details, its preview and its release, turned into
// what the page prints. Nothing here asks anyone: Build takes what the Source
// read, so the model is tested without a server.

// Input is what the page is built from.
type Input struct {
	Run *client.RunDetails
	// Plan is the run's preview: nil before it, or when the run could not
	// be asked (Run.ProgressError says why).
	Plan *client.RunPlan
	// Release is the release the run made (nil when it made none, or when it
	// could not be read: ReleaseError says why); Previous is the one before
	// it, which records what a deleted resource was.
	Release       *engine.Release
	ReleaseError  error
	Previous      *engine.Release
	PreviousError error
	// Now is when the page is made: how long a running run has taken.
	Now time.Time
}

// View is the page.
type View struct {
	Title string
	// Message is the page's whole text when there is no run to show (an
	// unknown run, a refusal).
	Message string
	// Nonce and CSS are the page's style, which only that nonce lets in.
	Nonce string
	CSS   template.CSS
	Run   *client.RunDetails
	// Status is the run's status, and StatusClass its colour.
	Status, StatusClass string
	Took                string
	People              []Person
	Counts              string
	Digest              string
	// PlanNote says why there is no plan to show.
	PlanNote  string
	Resources []Resource
	// MoreResources says how many resources the page leaves out.
	MoreResources string
	Release       *engine.Release
	// ReleaseNote says why the release is not shown.
	ReleaseNote string
	// RecordedNote says why resources the run deletes show no fields.
	RecordedNote string
	// Refresh: the run goes on, so the page reloads itself.
	Refresh bool
	// Awaiting says how to answer a run that awaits approval of this plan.
	Awaiting string
}

// Person is someone who did something to the run.
type Person struct {
	Verb, Name, Time, Reason string
	Verified                 bool
}

// Resource is one resource's part of the plan and of the run.
type Resource struct {
	ID     string
	Action engine.Action
	// Outcome is what its step did (a runspec.NodeStatus), OutcomeClass its
	// colour; Start is when the step started after the run did, Took how
	// long it took.
	Outcome, OutcomeClass string
	Start, Took           string
	Error                 string
	Drifted               bool
	TakingOverFrom        string
	// Unhealthy is the health of an unchanged resource the preview found
	// not healthy, which an apply waits for again.
	Unhealthy string
	// Rows compare the resource before (left: live, or as last recorded for
	// one the run deletes) and as desired (right), field by field.
	Rows []Row
	// Changed counts the rows that change.
	Changed int
}

// Verb is the resource's action as the page names it.
func (r Resource) Verb() string {
	if r.Action == engine.UnChanged {
		return "unchanged"
	}
	return strings.ToLower(string(r.Action))
}

// Open reports whether the page shows the resource's rows unfolded: those of
// a resource that changes, or whose step did not succeed.
func (r Resource) Open() bool {
	return r.Changed > 0 || r.Action == engine.Create || r.Action == engine.Delete || r.OutcomeClass == "bad"
}

// Row is one field, on both sides.
type Row struct {
	Path        string
	Left, Right Value
	// Changed marks a field the run changes.
	Changed bool
	// Note is a row that is no field ("(12 more fields change)").
	Note bool
}

// Value is one side of a row.
type Value struct {
	Text string
	// Absent: the field is not on this side.
	Absent bool
	// Masked: a sensitive value, not shown.
	Masked bool
	// Block: a value of several lines, shown as such.
	Block bool
}

// Build makes the page of a run.
func Build(in Input) View {
	d := in.Run
	v := View{
		Title:       fmt.Sprintf("%s %s/%s", d.Operation, d.Project, d.Workspace),
		Run:         d,
		Status:      d.Status,
		StatusClass: statusClass(d.Status),
		Took:        d.Duration(in.Now).Round(time.Millisecond).String(),
		Refresh:     d.Running(),
		Release:     in.Release,
	}
	if d.People != nil {
		v.People = people(*d.People)
	}
	if d.Running() && d.Status == string(runspec.StatusAwaitingApproval) && in.Plan != nil {
		v.Awaiting = fmt.Sprintf("This plan awaits approval: `kumo approve %[1]s --digest %[2]s` approves it, `kumo reject %[1]s --reason ...` rejects it.", d.RunID, in.Plan.Digest)
	}
	if d.Changes != nil {
		v.Counts = d.Changes.String()
	}
	switch {
	case in.Plan == nil && d.Operation == "generate":
		v.PlanNote = "A generate run makes a spec; it has no plan."
	case in.Plan == nil && d.Operation == "drift":
		v.PlanNote = fmt.Sprintf("A drift check compares live resources with the last release; `kumo drift report --check %s` shows what it found.", d.RunID)
	case in.Plan == nil && d.ProgressError != "":
		v.PlanNote = "The plan could not be read: " + d.ProgressError
	case in.Plan == nil:
		v.PlanNote = "No plan yet: the run has not previewed its changes."
	default:
		v.Digest = in.Plan.Digest
		v.Resources = resources(in, in.Plan.Changes)
		if n := len(in.Plan.Changes) - len(v.Resources); n > 0 {
			v.MoreResources = fmt.Sprintf("%d more resources are in the plan: `kumo run show %s` lists them all.", n, d.RunID)
		}
	}
	switch {
	case in.ReleaseError != nil:
		v.ReleaseNote = "The release could not be read: " + in.ReleaseError.Error()
	case in.Release == nil && d.Revision == 0:
		v.ReleaseNote = "The run made no release."
	}
	if in.PreviousError != nil {
		v.RecordedNote = "What the deleted resources were could not be read: " + in.PreviousError.Error()
	}
	return v
}

func people(p engine.People) []Person {
	var out []Person
	add := func(verb string, a *engine.Actor) {
		if a == nil {
			return
		}
		person := Person{Verb: verb, Name: a.Name, Verified: a.Verified, Reason: a.Reason}
		if !a.Time.IsZero() {
			person.Time = a.Time.UTC().Format(time.RFC3339)
		}
		out = append(out, person)
	}
	add("started", p.StartedBy)
	for i := range p.Approvals {
		add("approved", &p.Approvals[i])
	}
	add("rejected", p.RejectedBy)
	add("cancelled", p.CancelledBy)
	return out
}

// MaxResources bounds the resources a page compares, so that a run of
// thousands stays a page a browser shows; the rest are counted.
const MaxResources = 500

// resources pairs each change of the plan with its step's outcome, in plan
// order.
func resources(in Input, changes []engine.Change) []Resource {
	outcomes := map[string]client.ResourceOutcome{}
	for _, o := range in.Run.Resources {
		outcomes[o.ID] = o
	}
	desired := releaseResources(engine.ReleaseSpec(in.Release))
	var recorded map[string]*engine.Resource
	if in.Previous != nil && in.Previous.State != nil {
		recorded = releaseResources(&engine.Spec{Resources: in.Previous.State.Resources})
	}
	out := make([]Resource, 0, min(len(changes), MaxResources))
	for _, c := range changes {
		if len(out) == MaxResources {
			break
		}
		r := Resource{ID: c.ID, Action: c.Action, Drifted: c.Drifted, TakingOverFrom: strings.Join(c.TakingOverFrom, ", ")}
		if c.Wait != nil {
			r.Unhealthy = c.Wait.Health.String()
		}
		if o, ok := outcomes[c.ID]; ok {
			r.Outcome, r.OutcomeClass, r.Error = string(o.Result), outcomeClass(o.Result), o.Error
			if !o.Started.IsZero() && !in.Run.Started.IsZero() {
				r.Start = "+" + o.Started.Sub(in.Run.Started).Round(time.Millisecond).String()
			}
			if o.Duration > 0 {
				r.Took = o.Duration.Round(time.Millisecond).String()
			}
		}
		r.Rows = rows(c, desired[c.ID], recorded[c.ID])
		for _, row := range r.Rows {
			if row.Changed {
				r.Changed++
			}
		}
		out = append(out, r)
	}
	return out
}

func releaseResources(s *engine.Spec) map[string]*engine.Resource {
	m := map[string]*engine.Resource{}
	if s == nil {
		return m
	}
	for i := range s.Resources {
		m[s.Resources[i].ID] = &s.Resources[i]
	}
	return m
}

// rows compares one resource side by side. The changed fields are the
// preview's (live before, planned after, sensitive values already masked);
// the fields around them are the desired resource's, the same on both sides
// (the preview found no difference there). A created resource has only its
// right side, a deleted one only its left, as last recorded.
func rows(c engine.Change, desired, recorded *engine.Resource) []Row {
	var out []Row
	switch c.Action {
	case engine.UnChanged, engine.Adopt, engine.Forget, engine.Move: // nothing live changes: no fields to compare
		return nil
	case engine.Create:
		if desired != nil {
			for _, l := range engine.Leaves(*desired) {
				out = append(out, Row{Path: l.Path, Left: Value{Absent: true}, Right: value(l.Value), Changed: true})
			}
		}
		return out
	case engine.Delete:
		if recorded != nil {
			for _, l := range engine.Leaves(*recorded) {
				out = append(out, Row{Path: l.Path, Left: value(l.Value), Right: Value{Absent: true}, Changed: true})
			}
		}
		return out
	}
	changed := map[string]bool{}
	for _, f := range c.Fields {
		if f.Before == nil && f.After == nil { // a note, as "(N more fields change)"
			continue
		}
		changed[f.Path] = true
		out = append(out, Row{Path: f.Path, Left: value(f.Before), Right: value(f.After), Changed: true})
		if f.Before == nil {
			out[len(out)-1].Left = Value{Absent: true}
		}
		if f.After == nil {
			out[len(out)-1].Right = Value{Absent: true}
		}
	}
	if desired != nil {
		for _, l := range engine.Leaves(*desired) {
			if !changed[l.Path] {
				out = append(out, Row{Path: l.Path, Left: value(l.Value), Right: value(l.Value)})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Row) int { return comparePaths(a.Path, b.Path) })
	for _, f := range c.Fields {
		if f.Before == nil && f.After == nil {
			out = append(out, Row{Path: f.Path, Note: true, Changed: true})
		}
	}
	return out
}

// value shows one side of a field as `kumo preview` does: a sensitive value
// masked, a value known only after apply as such, strings quoted unless they
// span lines, the rest as JSON.
func value(v any) Value {
	switch x := v.(type) {
	case nil:
		return Value{Text: "null"}
	case string:
		switch {
		case x == engine.Masked:
			return Value{Text: engine.Masked, Masked: true}
		case x == engine.KnownAfterApply || engine.IsRef(x):
			return Value{Text: engine.KnownAfterApply}
		case strings.Contains(x, "\n"):
			return Value{Text: x, Block: true}
		}
		return Value{Text: fmt.Sprintf("%q", x)}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return Value{Text: fmt.Sprint(v)}
	}
	return Value{Text: string(data)}
}

// comparePaths orders field paths as Diff lists them: segment by segment,
// list indexes by number.
func comparePaths(a, b string) int {
	as, bs := segments(a), segments(b)
	for i := range min(len(as), len(bs)) {
		if c := compareSegments(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}

func compareSegments(a, b string) int {
	var i, j int
	if _, err := fmt.Sscanf(a, "[%d]", &i); err == nil {
		if _, err := fmt.Sscanf(b, "[%d]", &j); err == nil {
			return i - j
		}
	}
	return strings.Compare(segmentKey(a), segmentKey(b))
}

// segmentKey is the key a segment names: .name and ["name"] are both name.
func segmentKey(s string) string {
	if strings.HasPrefix(s, `["`) {
		var k string
		if _, err := fmt.Sscanf(s[1:len(s)-1], "%q", &k); err == nil {
			return k
		}
	}
	return strings.TrimPrefix(s, ".")
}

// segments splits a path at its dots and brackets; a quoted key may hold
// either.
func segments(path string) []string {
	var out []string
	start, inQuote := 0, false
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && (c == '.' || c == '[') && i > start:
			out = append(out, path[start:i])
			start = i
		}
	}
	return append(out, path[start:])
}

func statusClass(s string) string {
	switch runspec.Status(s) {
	case runspec.StatusSucceeded:
		return "ok"
	case runspec.StatusFailed, "terminated", "timed-out":
		return "bad"
	case runspec.StatusCancelled:
		return "warn"
	}
	return "run"
}

func outcomeClass(s runspec.NodeStatus) string {
	switch s {
	case runspec.NodeSucceeded:
		return "ok"
	case runspec.NodeFailed:
		return "bad"
	case runspec.NodeSkipped, runspec.NodeCompensated:
		return "warn"
	case runspec.NodeUnchanged:
		return "none"
	}
	return "run"
}
