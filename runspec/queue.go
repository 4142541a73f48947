package runspec

import (
	"fmt"
	"regexp"
	"time"

	"github.com/kumoproj/kumo/engine"
)

// The run queue of a project+workspace: `kumo apply --queue` (or a workspace
// whose runs.queue is true) does not fail while another run holds the
// stack's lock (MutatingWorkflowID) but waits its turn, first come first
// served, in one Queue workflow per stack. The workflow receives each queued
// run as an EnqueueSignal (sent with SignalWithStart, so the first one starts
// it), whose header the kumo frontend stamps with the subject that queued it;
// when its turn comes it starts the run as a child with the stack's own ID,
// as that subject, and the run generates, previews and waits for approval
// then, not when it was queued.
const (
	QueueWorkflow = "Queue"
	// EnqueueSignal adds a QueueEntry at the end of the queue.
	EnqueueSignal = "kumo-enqueue"
	// DequeueSignal removes a queued entry (a Dequeue) before it starts.
	DequeueSignal = "kumo-dequeue"
	// QueueQuery answers the queue's QueueStatus.
	QueueQuery = "kumo-queue"
)

// QueueWorkflowID is the ID of project+workspace's run queue.
func QueueWorkflowID(project, workspace string) string {
	return MutatingWorkflowID(project, workspace) + "/queue"
}

// QueuedStatus is the status `kumo run list` gives a run waiting in a queue.
const QueuedStatus = "queued"

// QueueEntry is one queued run: what the client would have started, and
// the ID it is known by until then (and in the queue's record after).
type QueueEntry struct {
	// ID names the entry: a random UUID the client chooses, so that `kumo
	// run cancel ID` takes it as it takes a run ID.
	ID string `json:"id"`
	// WorkflowType is the run's: Apply, Destroy or Rollback.
	WorkflowType string   `json:"workflowType"`
	Input        RunInput `json:"input"`
	// Summary is the run's static summary in the Web UI.
	Summary string `json:"summary,omitempty"`
}

// QueueableWorkflows are the runs that may wait in a queue.
var QueueableWorkflows = map[string]string{ApplyWorkflow: "apply", DestroyWorkflow: "destroy", RollbackWorkflow: "rollback"}

var queueEntryID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Validate checks an entry against the queue of project+workspace it is
// sent to.
func (e QueueEntry) Validate(project, workspace string) error {
	if !queueEntryID.MatchString(e.ID) {
		return fmt.Errorf("queue entry ID %q is not a lower-case UUID", e.ID)
	}
	if _, ok := QueueableWorkflows[e.WorkflowType]; !ok {
		return fmt.Errorf("queue entry %s: a %q run cannot be queued (only apply, destroy and rollback)", e.ID, e.WorkflowType)
	}
	if e.Input.Project != project || e.Input.Workspace != workspace {
		return fmt.Errorf("queue entry %s is for %s/%s, not this queue's %s/%s", e.ID, e.Input.Project, e.Input.Workspace, project, workspace)
	}
	return nil
}

// Dequeue is DequeueSignal's argument.
type Dequeue struct {
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
	// By is the client's name, recorded unverified only when the signal
	// carries no subject header.
	By string `json:"by,omitempty"`
}

// QueueState is where a queue entry is.
type QueueState string

const (
	QueueWaiting QueueState = "queued"
	// QueueStarted: its run was started (WorkflowID, RunID).
	QueueStarted QueueState = "started"
	// QueueRemoved: cancelled before it started (RemovedBy).
	QueueRemoved QueueState = "removed"
	// QueueFailed: its run could not be started (Error).
	QueueFailed QueueState = "failed"
)

// QueuedRun is one entry as the queue reports it.
type QueuedRun struct {
	ID        string `json:"id"`
	Operation string `json:"operation"`
	Stack     string `json:"stack,omitempty"`
	// SpecHash is the spec the run will apply (none for a destroy): kept in
	// the backend while the run waits, though no release names it yet.
	SpecHash string       `json:"specHash,omitempty"`
	State    QueueState   `json:"state"`
	Position int          `json:"position,omitempty"` // 1: next to start
	QueuedBy engine.Actor `json:"queuedBy"`
	QueuedAt time.Time    `json:"queuedAt"`
	// WorkflowID and RunID are the run's once it started.
	WorkflowID string        `json:"workflowID,omitempty"`
	RunID      string        `json:"runID,omitempty"`
	RemovedBy  *engine.Actor `json:"removedBy,omitempty"`
	Error      string        `json:"error,omitempty"`
}

// QueueStatus is QueueQuery's answer: the entries waiting, in order, and
// those that left the queue lately (started, removed, failed), newest last.
type QueueStatus struct {
	Project   string      `json:"project"`
	Workspace string      `json:"workspace"`
	Waiting   []QueuedRun `json:"waiting"`
	Recent    []QueuedRun `json:"recent,omitempty"`
	// Blocked says why the first entry has not started: the run that holds
	// the stack's lock (one the queue did not start).
	Blocked string `json:"blocked,omitempty"`
}

// Find returns the entry id, waiting or recent.
func (s QueueStatus) Find(id string) (QueuedRun, bool) {
	for _, list := range [][]QueuedRun{s.Waiting, s.Recent} {
		for _, r := range list {
			if r.ID == id {
				return r, true
			}
		}
	}
	return QueuedRun{}, false
}

// QueueInput is what a Queue continues as new with: the entries still
// waiting, with the subjects that queued them. A start from a client must
// carry none: the workflow honours them only in a run it continued itself.
type QueueInput struct {
	Project   string        `json:"project"`
	Workspace string        `json:"workspace"`
	Waiting   []QueuedCarry `json:"waiting,omitempty"`
	Recent    []QueuedRun   `json:"recent,omitempty"`
}

// QueuedCarry is a waiting entry carried across continue-as-new.
type QueuedCarry struct {
	Entry   QueueEntry `json:"entry"`
	Subject Subject    `json:"subject"`
	Status  QueuedRun  `json:"status"`
}
