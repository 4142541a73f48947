package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
)

// QueuedEntry is a run waiting in its stack's run queue (Request.Queue):
// Run.Queued of the handle Apply, Destroy and Rollback return for it.
type QueuedEntry struct {
	c         *Client
	Project   string
	Workspace string
	// ID names the entry (`kumo run cancel ID` takes it) until its run
	// starts; Position is its place when it was queued (1: next).
	ID       string
	Position int
}

// enqueue adds the run in to project+workspace's run queue, starting the
// queue if none runs (SignalWithStart): the run starts, as the subject the
// frontend stamps on this request, when the runs before it have ended.
func (c *Client) enqueue(ctx context.Context, workflowType string, req Request, in runspec.RunInput) (*Run, error) {
	operation, ok := runspec.QueueableWorkflows[workflowType]
	if !ok {
		return nil, fmt.Errorf("a %s run cannot be queued (only apply, destroy and rollback)", operations[workflowType])
	}
	tc, err := c.connect(ctx)
	if errors.Is(err, embedded.ErrLocked) {
		return nil, fmt.Errorf("queue %s on %s/%s: another kumo process holds this home's embedded Temporal, so this one cannot reach its queue; start `kumo server` to queue runs across processes (%w)", operation, req.Project, req.Workspace, err)
	}
	if err != nil {
		return nil, err
	}
	id, err := newEntryID()
	if err != nil {
		return nil, err
	}
	entry := runspec.QueueEntry{ID: id, WorkflowType: workflowType, Input: in, Summary: staticSummary(operation, req)}
	if err := entry.Validate(req.Project, req.Workspace); err != nil {
		return nil, err
	}
	queueID := runspec.QueueWorkflowID(req.Project, req.Workspace)
	_, err = tc.SignalWithStartWorkflow(ctx, queueID, runspec.EnqueueSignal, entry, sdkclient.StartWorkflowOptions{
		ID:                    queueID,
		TaskQueue:             runspec.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		StaticSummary:         fmt.Sprintf("run queue of %s/%s", req.Project, req.Workspace),
		TypedSearchAttributes: runAttributes(req.Project, req.Workspace, "", "queue"),
	}, runspec.QueueWorkflow, runspec.QueueInput{Project: req.Project, Workspace: req.Workspace})
	if err != nil {
		return nil, fmt.Errorf("queue %s on %s/%s: %w", operation, req.Project, req.Workspace, err)
	}
	q := &QueuedEntry{c: c, Project: req.Project, Workspace: req.Workspace, ID: id}
	// The queue answers once it has taken the signal: wait for the entry to
	// show, so that what is printed is where it is.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := q.status(ctx)
		if err == nil {
			if r, ok := st.Find(id); ok {
				if r.State == runspec.QueueFailed {
					return nil, fmt.Errorf("queue %s on %s/%s: %s", operation, req.Project, req.Workspace, r.Error)
				}
				q.Position = r.Position
				return &Run{c: c, Operation: operation, WorkflowID: queueID, RunID: id, Queued: q}, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("queue %s on %s/%s: the run queue %s did not list entry %s within 30s (%v)", operation, req.Project, req.Workspace, queueID, id, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// newEntryID is a random (version 4) UUID.
func newEntryID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// status asks the stack's queue (its latest run) where its entries are.
func (q *QueuedEntry) status(ctx context.Context) (runspec.QueueStatus, error) {
	return q.c.queueStatus(ctx, runspec.QueueWorkflowID(q.Project, q.Workspace))
}

func (c *Client) queueStatus(ctx context.Context, queueID string) (runspec.QueueStatus, error) {
	var st runspec.QueueStatus
	v, err := c.temporal.QueryWorkflow(ctx, queueID, "", runspec.QueueQuery)
	if err != nil {
		return st, err
	}
	return st, v.Get(&st)
}

// Started waits until the entry's run has started and returns it; moved is
// called with the entry each time its place changes. An entry removed from
// the queue, or whose run could not start, is an error saying so.
func (q *QueuedEntry) Started(ctx context.Context, moved func(runspec.QueuedRun)) (*Run, error) {
	last := -1
	for {
		st, err := q.status(ctx)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("the run queue of %s/%s is gone, and entry %s with it", q.Project, q.Workspace, q.ID)
		}
		if err == nil {
			r, ok := st.Find(q.ID)
			if !ok {
				return nil, fmt.Errorf("the run queue of %s/%s no longer lists entry %s", q.Project, q.Workspace, q.ID)
			}
			switch r.State {
			case runspec.QueueStarted:
				return &Run{c: q.c, Operation: r.Operation, WorkflowID: r.WorkflowID, RunID: r.RunID}, nil
			case runspec.QueueRemoved:
				by := ""
				if r.RemovedBy != nil {
					by = " by " + r.RemovedBy.String()
					if r.RemovedBy.Reason != "" {
						by += " (" + r.RemovedBy.Reason + ")"
					}
				}
				return nil, fmt.Errorf("%w: queued run %s was removed from the queue of %s/%s%s before it started", errCancelled, q.ID, q.Project, q.Workspace, by)
			case runspec.QueueFailed:
				return nil, fmt.Errorf("queued run %s of %s/%s could not start: %s", q.ID, q.Project, q.Workspace, r.Error)
			}
			if r.Position != last && moved != nil {
				moved(r)
			}
			last = r.Position
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// queues lists the running run queues of f's project and workspace (all
// that the caller may see without them).
func (c *Client) queues(ctx context.Context, project, workspace string) ([]string, error) {
	terms := []string{"KumoOperation = 'queue'", "ExecutionStatus = 'Running'"}
	for _, t := range []struct{ attr, value string }{{"KumoProject", project}, {"KumoWorkspace", workspace}} {
		if t.value == "" {
			continue
		}
		if strings.ContainsAny(t.value, `'"\`) {
			return nil, fmt.Errorf("%s %q: quotes and backslashes cannot be searched for", strings.TrimPrefix(t.attr, "Kumo"), t.value)
		}
		terms = append(terms, fmt.Sprintf("%s = '%s'", t.attr, t.value))
	}
	tc, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: c.opts.Namespace, Query: strings.Join(terms, " AND "), PageSize: 1000, NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list run queues: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			if id := e.GetExecution().GetWorkflowId(); !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return ids, nil
		}
	}
}

// ListQueued lists the runs waiting in run queues that f selects (its
// operation and its project and workspace; a status other than queued
// selects none), oldest first in each queue.
func (c *Client) ListQueued(ctx context.Context, f RunFilter) ([]RunInfo, error) {
	if f.Status != "" && f.Status != runspec.QueuedStatus {
		return nil, nil
	}
	ids, err := c.queues(ctx, f.Project, f.Workspace)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	// A queue answers through a worker: in a one-shot kumo, this process's.
	if _, err := c.connect(ctx); err != nil {
		return nil, err
	}
	var out []RunInfo
	for _, id := range ids {
		st, err := c.queueStatus(ctx, id)
		if err != nil {
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				continue // it ended since it was listed
			}
			return nil, fmt.Errorf("run queue %s: %w", id, err)
		}
		for _, r := range st.Waiting {
			if r.State != runspec.QueueWaiting || (f.Operation != "" && r.Operation != f.Operation) {
				continue
			}
			out = append(out, RunInfo{RunID: r.ID, WorkflowID: id, Operation: r.Operation, Project: st.Project, Workspace: st.Workspace,
				Stack: r.Stack, Status: runspec.QueuedStatus, Started: r.QueuedAt, Position: r.Position, QueuedBy: r.QueuedBy.String()})
		}
	}
	return out, nil
}

// FindQueued finds the waiting entry id in the run queues of project (of
// every project without one); nil when none has it.
func (c *Client) FindQueued(ctx context.Context, project, id string) (*RunInfo, error) {
	runs, err := c.ListQueued(ctx, RunFilter{Project: project})
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r.RunID == id {
			return &r, nil
		}
	}
	return nil, nil
}

// dequeue removes the waiting entry info from its queue. An entry whose run
// started meanwhile is cancelled as that run.
func (c *Client) dequeue(ctx context.Context, info *RunInfo, reason string) (*Run, error) {
	err := c.temporal.SignalWorkflow(ctx, info.WorkflowID, "", runspec.DequeueSignal, runspec.Dequeue{ID: info.RunID, Reason: reason, By: startedBy()})
	if err != nil {
		return nil, fmt.Errorf("remove queued run %s from %s: %w", info.RunID, info.WorkflowID, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := c.queueStatus(ctx, info.WorkflowID)
		if err == nil {
			r, ok := st.Find(info.RunID)
			switch {
			case !ok:
				return nil, fmt.Errorf("run queue %s no longer lists entry %s", info.WorkflowID, info.RunID)
			case r.State == runspec.QueueRemoved:
				q := &QueuedEntry{c: c, Project: info.Project, Workspace: info.Workspace, ID: info.RunID}
				return &Run{c: c, Operation: info.Operation, WorkflowID: info.WorkflowID, RunID: info.RunID, Queued: q}, nil
			case r.State == runspec.QueueStarted:
				run := &Run{c: c, Operation: r.Operation, WorkflowID: r.WorkflowID, RunID: r.RunID}
				if err := run.Cancel(ctx, reason); err != nil {
					return nil, err
				}
				return run, nil
			case r.State == runspec.QueueFailed:
				return nil, fmt.Errorf("cannot cancel queued run %s: %w (it could not start: %s)", info.RunID, ErrRunEnded, r.Error)
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("run queue %s did not remove entry %s within 30s (%v)", info.WorkflowID, info.RunID, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
