package client

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/kumoproj/kumo/runspec"
)

// RunInfo is one run as Temporal's visibility store lists it: kumo's search
// attributes, times, and the preview's counts from the run's memo.
type RunInfo struct {
	RunID      string `json:"runID"`
	WorkflowID string `json:"workflowID"`
	Operation  string `json:"operation"`
	Project    string `json:"project"`
	Workspace  string `json:"workspace"`
	Stack      string `json:"stack,omitempty"`
	// Status is a runspec.Status (running, awaiting-approval, applying, ...,
	// succeeded, failed, cancelled), or terminated / timed-out for runs ended
	// by Temporal.
	Status   string    `json:"status"`
	Revision int       `json:"revision,omitempty"`
	Started  time.Time `json:"started"`
	Closed   time.Time `json:"closed,omitzero"`
	// Changes are the preview's counts; nil before the preview, and for runs
	// that have none (generate) or were started by an older kumo.
	Changes *runspec.ChangeCounts `json:"changes,omitempty"`
	// Position is a queued run's place in its stack's run queue (1: next),
	// and QueuedBy who queued it (Status queued only).
	Position int    `json:"position,omitempty"`
	QueuedBy string `json:"queuedBy,omitempty"`
}

// Running reports whether the run has not ended.
func (i *RunInfo) Running() bool { return i.Closed.IsZero() }

// Duration is how long the run took, or has taken so far.
func (i *RunInfo) Duration(now time.Time) time.Duration {
	if i.Running() {
		return now.Sub(i.Started)
	}
	return i.Closed.Sub(i.Started)
}

// RunFilter selects runs; empty fields select all.
type RunFilter struct {
	Project   string
	Workspace string
	// Operation is one of RunOperations.
	Operation string
	// Status is one of RunStatuses.
	Status string
	// Limit bounds how many runs are listed, newest first (0: DefaultRunLimit).
	Limit int
}

// DefaultRunLimit is how many runs ListRuns returns without a limit.
const DefaultRunLimit = 50

// RunOperations are the values of the KumoOperation search attribute.
var RunOperations = []string{"apply", "destroy", "rollback", "generate", "preview", "drift", "remediate"}

// RunStatuses are the values RunFilter.Status takes. A status names the state a
// run is in as `kumo run wait` reports it: completed is a run that succeeded,
// failed includes runs Temporal terminated or timed out, cancelled includes
// applies whose preview was not approved.
var RunStatuses = []string{"queued", "running", "awaiting-approval", "completed", "failed", "cancelled"}

// statusQueries are the visibility queries of RunStatuses. ExecutionStatus
// comes first so that runs started by an older kumo, without KumoStatus, are
// found too (a missing KumoStatus compares as NULL).
var statusQueries = map[string]string{
	"running":           "ExecutionStatus = 'Running' AND (KumoStatus IS NULL OR KumoStatus != 'awaiting-approval')",
	"awaiting-approval": "ExecutionStatus = 'Running' AND KumoStatus = 'awaiting-approval'",
	"completed":         "ExecutionStatus = 'Completed'",
	"failed":            "ExecutionStatus IN ('Failed', 'Terminated', 'TimedOut') AND (KumoStatus IS NULL OR KumoStatus != 'cancelled')",
	"cancelled":         "(ExecutionStatus = 'Canceled' OR (ExecutionStatus = 'Failed' AND KumoStatus = 'cancelled'))",
}

// Query is the filter as a Temporal visibility query.
func (f RunFilter) Query() (string, error) {
	var terms []string
	for _, t := range []struct{ attr, value string }{
		{"KumoProject", f.Project}, {"KumoWorkspace", f.Workspace}, {"KumoOperation", f.Operation},
	} {
		if t.value == "" {
			continue
		}
		if strings.ContainsAny(t.value, `'"\`) {
			return "", fmt.Errorf("%s %q: quotes and backslashes cannot be searched for", strings.TrimPrefix(t.attr, "Kumo"), t.value)
		}
		terms = append(terms, fmt.Sprintf("%s = '%s'", t.attr, t.value))
	}
	if f.Operation != "" && !slices.Contains(RunOperations, f.Operation) {
		return "", fmt.Errorf("unknown operation %q (want one of %s)", f.Operation, strings.Join(RunOperations, ", "))
	}
	status := f.Status
	if status == runspec.QueuedStatus {
		status = "" // visibility lists no queued run: ListQueued does
	}
	if status == "succeeded" {
		status = "completed"
	}
	if status != "" {
		q, ok := statusQueries[status]
		if !ok {
			return "", fmt.Errorf("unknown status %q (want one of %s)", f.Status, strings.Join(RunStatuses, ", "))
		}
		terms = append(terms, q)
	}
	// Run queues are not runs: their entries are listed by ListQueued.
	if len(terms) == 0 {
		// Only kumo's runs: every one has a project.
		return "KumoProject IS NOT NULL AND WorkflowType != '" + runspec.QueueWorkflow + "'", nil
	}
	return strings.Join(terms, " AND ") + " AND WorkflowType != '" + runspec.QueueWorkflow + "'", nil
}

// ListRuns lists runs from Temporal's visibility store, newest first: one
// request per page, no call to the runs themselves.
func (c *Client) ListRuns(ctx context.Context, f RunFilter) ([]RunInfo, error) {
	query, err := f.Query()
	if err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultRunLimit
	}
	queued, err := c.ListQueued(ctx, f)
	if err != nil || f.Status == runspec.QueuedStatus {
		return queued, err
	}
	tc, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	runs := queued
	var token []byte
	for len(runs) < limit {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: c.opts.Namespace, Query: query, PageSize: int32(min(limit-len(runs), 1000)), NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list runs (%s): %w", query, err)
		}
		for _, e := range resp.GetExecutions() {
			runs = append(runs, runInfo(e, c.DataConverter()))
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	if len(runs) > limit {
		runs = runs[:limit]
	}
	slices.SortStableFunc(runs, func(a, b RunInfo) int { return b.Started.Compare(a.Started) })
	return runs, nil
}

// ListRunsPage lists one page of runs from Temporal's visibility store,
// newest first: at most f.Limit (DefaultRunLimit without one, at most 1000),
// from token (nil: the first page). next is the token of the page after,
// nil after the last one; it is Temporal's, good for the same filter only.
func (c *Client) ListRunsPage(ctx context.Context, f RunFilter, token []byte) (runs []RunInfo, next []byte, err error) {
	query, err := f.Query()
	if err != nil {
		return nil, nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultRunLimit
	}
	var queued []RunInfo
	if token == nil {
		// The queued runs come first, on the first page.
		if queued, err = c.ListQueued(ctx, f); err != nil || f.Status == runspec.QueuedStatus {
			return queued, nil, err
		}
	}
	tc, err := c.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: c.opts.Namespace, Query: query, PageSize: int32(min(limit, 1000)), NextPageToken: token,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list runs (%s): %w", query, err)
	}
	runs = append(make([]RunInfo, 0, len(queued)+len(resp.GetExecutions())), queued...)
	for _, e := range resp.GetExecutions() {
		runs = append(runs, runInfo(e, c.DataConverter()))
	}
	return runs, resp.GetNextPageToken(), nil
}

// runIDPattern is a Temporal run ID (a UUID); checking it keeps the visibility
// query well-formed and gives a typo a clear error.
var runIDPattern = regexp.MustCompile(`^[0-9a-fA-F-]{8,64}$`)

// IsRunID reports whether s has the form of a run ID.
func IsRunID(s string) bool { return runIDPattern.MatchString(s) }

// ErrNoRun is wrapped by FindRun's error for a run ID Temporal does not know.
var ErrNoRun = errors.New("no such run")

// FindRun looks a run up by its run ID (what kumo prints when it starts one)
// and checks that it belongs to project.
func (c *Client) FindRun(ctx context.Context, project, runID string) (*RunInfo, error) {
	if !IsRunID(runID) {
		return nil, fmt.Errorf("%q is not a run ID: kumo prints the run ID when it starts a run, and `kumo run list` lists them", runID)
	}
	tc, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: c.opts.Namespace, Query: fmt.Sprintf("RunId = '%s'", runID), PageSize: 2,
	})
	if err != nil {
		return nil, fmt.Errorf("look up run %s: %w", runID, err)
	}
	if len(resp.GetExecutions()) == 0 {
		return nil, fmt.Errorf("%w %s in namespace %s: `kumo run list` lists the runs of project %s", ErrNoRun, runID, c.opts.Namespace, project)
	}
	info := runInfo(resp.GetExecutions()[0], c.DataConverter())
	switch {
	case info.Project == "":
		return nil, &quietError{msg: fmt.Sprintf("run %s (workflow %s) is not a kumo run", runID, info.WorkflowID), target: ErrNoRun}
	case info.Operation == "queue":
		return nil, &quietError{msg: fmt.Sprintf("run %s (workflow %s) is the run queue of %s/%s, not a run: `kumo run list --status queued` lists the runs waiting in it", runID, info.WorkflowID, info.Project, info.Workspace), target: ErrNoRun}
	case project != "" && info.Project != project:
		return nil, fmt.Errorf("run %s belongs to project %q, not %q: pass --project %s", runID, info.Project, project, info.Project)
	}
	return &info, nil
}

// runInfo reads one visibility row; dc decodes the memo, which the SDK
// encodes with the worker's data converter (search attributes it never does).
func runInfo(e *workflowpb.WorkflowExecutionInfo, dc converter.DataConverter) RunInfo {
	attrs := e.GetSearchAttributes().GetIndexedFields()
	keyword := func(name string) string {
		var s string
		_ = decodePayload(attrs[name], &s)
		return s
	}
	var revision int64
	_ = decodePayload(attrs[runspec.AttrRevision], &revision)
	info := RunInfo{
		RunID:      e.GetExecution().GetRunId(),
		WorkflowID: e.GetExecution().GetWorkflowId(),
		Operation:  keyword(runspec.AttrOperation),
		Project:    keyword(runspec.AttrProject),
		Workspace:  keyword(runspec.AttrWorkspace),
		Stack:      keyword(runspec.AttrStack),
		Status:     runStatus(e.GetStatus(), keyword(runspec.AttrStatus)),
		Revision:   int(revision),
		Started:    e.GetStartTime().AsTime(),
	}
	if e.GetCloseTime() != nil {
		info.Closed = e.GetCloseTime().AsTime()
	}
	if info.Operation == "" {
		info.Operation = operations[e.GetType().GetName()]
	}
	var counts runspec.ChangeCounts
	if p := e.GetMemo().GetFields()[runspec.ChangesMemo]; p != nil && dc.FromPayload(p, &counts) == nil {
		info.Changes = &counts
	}
	return info
}

func decodePayload(p *commonpb.Payload, v any) error {
	if p == nil {
		return errors.New("no value")
	}
	return converter.GetDefaultDataConverter().FromPayload(p, v)
}

// runStatus is what kumo calls a run's state: Temporal's execution status,
// refined by KumoStatus while the run is running (awaiting approval, applying)
// and for a failed workflow that kumo counts as cancelled (a rejected preview,
// a cancel that finished before Temporal's cancel request arrived).
func runStatus(execution enumspb.WorkflowExecutionStatus, kumo string) string {
	switch execution {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		if kumo == "" || runspec.Status(kumo).Final() {
			return string(runspec.StatusRunning)
		}
		return kumo
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		if kumo == string(runspec.StatusDriftStuck) {
			return kumo
		}
		return string(runspec.StatusSucceeded)
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return string(runspec.StatusCancelled)
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		if kumo == string(runspec.StatusCancelled) {
			return kumo
		}
		return string(runspec.StatusFailed)
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed-out"
	}
	return strings.ToLower(strings.TrimPrefix(execution.String(), "WORKFLOW_EXECUTION_STATUS_"))
}
