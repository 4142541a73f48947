package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/runspec"
)

// RunStarted answers POST runs (and cancel): the run, where to poll it and
// its page in the Temporal Web UI.
type RunStarted struct {
	ID         string `json:"id"`
	WorkflowID string `json:"workflowId"`
	Operation  string `json:"operation"`
	Project    string `json:"project,omitempty"`
	Workspace  string `json:"workspace,omitempty"`
	StatusURL  string `json:"statusUrl"`
	ResultURL  string `json:"resultUrl"`
	WebUIURL   string `json:"webUiUrl,omitempty"`
	// Replayed is true when an Idempotency-Key named a run started before:
	// this request started none.
	Replayed bool `json:"replayed,omitempty"`
	// Queued is true when the run waits in its stack's run queue: then ID
	// names the queue entry (the runs list with status queued shows it at
	// Position; cancel takes it out) until the run starts under a run ID of
	// its own.
	Queued   bool `json:"queued,omitempty"`
	Position int  `json:"position,omitempty"`
}

// RunView is GET runs/{id}: the run as `kumo run show -o json` shows it,
// with its links.
type RunView struct {
	*client.RunDetails
	Links RunLinks `json:"links"`
}

// RunLinks are a run's URLs.
type RunLinks struct {
	Self   string `json:"self"`
	Result string `json:"result"`
	Logs   string `json:"logs"`
	// Page is the run's page (plan side by side, outcomes), when served.
	Page  string `json:"page,omitempty"`
	WebUI string `json:"webUi,omitempty"`
}

// AnswerRequest is the body of approve and reject.
type AnswerRequest struct {
	// Digest names the plan approved: its digest as the run's result shows
	// it, or 12 or more of its first hex digits (required to approve).
	Digest string `json:"digest,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// CancelRequest is the body of cancel (optional).
type CancelRequest struct {
	Reason string `json:"reason,omitempty"`
}

// runIDPattern is a Temporal run ID, checked before it reaches a query.
var runIDPattern = regexp.MustCompile(`^[0-9a-fA-F-]{8,64}$`)

func (c *call) runID() (string, error) {
	id := c.r.PathValue("id")
	if !runIDPattern.MatchString(id) {
		return "", invalid(fmt.Errorf("%q is not a run ID", id))
	}
	return id, nil
}

// readBody reads a JSON body, at most the input size limit.
func (c *call) readBody(optional bool) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, input.MaxSize()))
	if err != nil {
		return nil, invalid(fmt.Errorf("body: %w", err))
	}
	if len(body) == 0 && !optional {
		return nil, invalid(errors.New("body: a JSON object is required"))
	}
	return body, nil
}

func decodeBody(body []byte, v any) error {
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return invalid(fmt.Errorf("body: %w", err))
	}
	return nil
}

// runActions are the action each operation needs.
var runActions = map[string]authz.Action{
	"generate": authz.Generate, "preview": authz.Preview, "apply": authz.Apply, "destroy": authz.Destroy,
	"rollback": authz.Rollback, "drift-check": authz.DriftCheck,
}

func startRun(c *call) error {
	body, err := c.readBody(false)
	if err != nil {
		return err
	}
	o, err := parseRunRequest(body)
	if err != nil {
		return invalid(err)
	}
	if err := c.may(runActions[o.Operation], o.Project, o.Workspace); err != nil {
		return err
	}
	start := func(ctx context.Context) (*client.Run, error) { return c.start(ctx, o) }
	var (
		run   *client.Run
		first = true
	)
	if key := c.r.Header.Get(IdempotencyHeader); key != "" {
		name, err := requestKey(c.subject.Name, key)
		if err != nil {
			return invalid(err)
		}
		run, first, err = c.kc.StartOnce(c.ctx, name, o.fingerprint(), start)
		if err != nil {
			return refused(err)
		}
	} else if run, err = start(c.ctx); err != nil {
		return refused(err)
	}
	started := c.started(run, o.Project, o.Workspace)
	started.Replayed = !first
	c.w.Header().Set("Location", started.StatusURL)
	return c.json(http.StatusAccepted, started)
}

// start starts the run o asks for, through the client as the CLI does.
func (c *call) start(ctx context.Context, o *runOptions) (*client.Run, error) {
	kc := c.kc
	settings, err := kc.Settings(ctx, o.Workspace, runspec.RuntimeSettings{})
	if err != nil {
		return nil, err
	}
	settings.ForceConflicts = o.ForceConflicts
	req := client.Request{
		Project: o.Project, Workspace: o.Workspace, Stack: o.Stack, Spec: o.spec, StackDir: o.StackDir, GitSource: o.Source, GitCommit: o.Commit,
		GeneratorTimeout: o.generatorTimeout, Parallelism: o.Parallelism, AutoApprove: o.Approval == "auto",
		ApprovalTimeout: o.approvalTimeout, RollbackOnFailure: o.RollbackOnFailure, Settings: settings,
		Wait: o.Wait, Timeout: o.timeout,
		Targets: o.Targets, TargetDependents: o.TargetDependents, AllowProtectedDelete: o.AllowProtectedDelete,
		Label: engine.ReleaseLabel{Version: o.Version, Message: o.Message},
		// What a kumo frontend replaces with the subject it authenticates,
		// and an existing cluster's run records, marked unverified.
		StartedBy: c.subject.Name,
	}
	if o.Queue != nil {
		req.Queue = *o.Queue
	} else if o.Operation == "apply" || o.Operation == "destroy" || o.Operation == "rollback" {
		ws, err := kc.Workspace(ctx, o.Workspace)
		if err != nil {
			return nil, err
		}
		req.Queue = ws.Runs.Queue
	}
	switch o.Operation {
	case "generate":
		return kc.Generate(ctx, req)
	case "preview":
		return kc.Preview(ctx, req)
	case "apply":
		return kc.Apply(ctx, req)
	case "destroy":
		return kc.Destroy(ctx, req)
	case "rollback":
		return kc.Rollback(ctx, req, o.Revision, o.AllowFailed)
	case "drift-check":
		return kc.StartDriftCheck(ctx, client.DriftRequest{Project: o.Project, Workspace: o.Workspace, Settings: settings, Parallelism: o.Parallelism, Mode: o.Mode})
	}
	return nil, fmt.Errorf("unknown operation %q", o.Operation)
}

func (c *call) started(run *client.Run, project, workspace string) RunStarted {
	if q := run.Queued; q != nil {
		list := Prefix + "/runs?" + url.Values{"project": {project}, "workspace": {workspace}, "status": {"queued"}}.Encode()
		return RunStarted{ID: run.RunID, WorkflowID: run.WorkflowID, Operation: run.Operation, Project: project, Workspace: workspace,
			StatusURL: list, ResultURL: list, Queued: true, Position: q.Position}
	}
	return RunStarted{
		ID: run.RunID, WorkflowID: run.WorkflowID, Operation: run.Operation, Project: project, Workspace: workspace,
		StatusURL: Prefix + "/runs/" + run.RunID, ResultURL: Prefix + "/runs/" + run.RunID + "/result",
		WebUIURL: c.kc.RunURL(run.WorkflowID, run.RunID),
	}
}

func listRuns(c *call) error {
	q := c.r.URL.Query()
	f := client.RunFilter{Project: q.Get("project"), Workspace: q.Get("workspace"), Operation: q.Get("operation"), Status: q.Get("status")}
	if f.Operation == "drift-check" {
		f.Operation = "drift"
	}
	tok, limit, err := c.page("runs", f.Project, f.Workspace, f.Operation, f.Status)
	if err != nil {
		return err
	}
	f.Limit = limit
	if _, err := f.Query(); err != nil {
		return invalid(err)
	}
	// Without a project (or workspace) the list spans more: the caller
	// needs the right to list there, */* for all runs.
	if err := c.may(authz.List, f.Project, f.Workspace); err != nil {
		return err
	}
	runs, next, err := c.kc.ListRunsPage(c.ctx, f, tok.Next)
	if err != nil {
		return err
	}
	out := runList{Items: runs}
	if out.Items == nil {
		out.Items = []client.RunInfo{}
	}
	if len(next) > 0 {
		out.NextPageToken = pageToken{Filter: tok.Filter, Next: next}.encode()
	}
	return c.json(http.StatusOK, out)
}

// findRun looks a run up and decides whether the caller may do action on
// its project/workspace, before anything is done to it.
func (c *call) findRun(action authz.Action) (*client.RunInfo, error) {
	id, err := c.runID()
	if err != nil {
		return nil, err
	}
	var info *client.RunInfo
	err = retryUnlisted(c.ctx, func() (err error) {
		info, err = c.kc.FindRun(c.ctx, "", id)
		return err
	})
	if errors.Is(err, client.ErrNoRun) && action == authz.Cancel {
		// A run waiting in a run queue has no run yet: its entry is found.
		if queued, qerr := c.kc.FindQueued(c.ctx, "", id); qerr != nil {
			return nil, qerr
		} else if queued != nil {
			info, err = queued, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if err := c.may(action, info.Project, info.Workspace); err != nil {
		return nil, err
	}
	return info, nil
}

func getRun(c *call) error {
	id, err := c.runID()
	if err != nil {
		return err
	}
	// Reading first, deciding before answering, saves a lookup; nothing
	// read is answered to a caller who may not show it.
	var d *client.RunDetails
	err = retryUnlisted(c.ctx, func() (err error) {
		d, err = c.kc.ShowRun(c.ctx, "", id)
		return err
	})
	if err != nil {
		return err
	}
	if err := c.may(authz.Show, d.Project, d.Workspace); err != nil {
		return err
	}
	return c.json(http.StatusOK, RunView{RunDetails: d, Links: c.links(&d.RunInfo)})
}

func (c *call) links(info *client.RunInfo) RunLinks {
	self := Prefix + "/runs/" + info.RunID
	l := RunLinks{Self: self, Result: self + "/result", Logs: self + "/logs", WebUI: c.kc.RunURL(info.WorkflowID, info.RunID)}
	if c.a.opts.Pages != nil {
		l.Page = "/runs/" + info.RunID
	}
	return l
}

func approveRun(c *call) error { return c.answer(true) }
func rejectRun(c *call) error  { return c.answer(false) }

// answer approves or rejects the plan a run awaits approval of.
func (c *call) answer(approve bool) error {
	body, err := c.readBody(true)
	if err != nil {
		return err
	}
	var req AnswerRequest
	if err := decodeBody(body, &req); err != nil {
		return err
	}
	if approve && req.Digest == "" {
		// An approval is of a plan someone saw: GET runs/{id}/result
		// shows its digest.
		return invalid(errors.New("digest: required to approve; GET the run's result for its plan's digest"))
	}
	action := authz.Approve
	if !approve {
		action = authz.Reject
	}
	info, err := c.findRun(action)
	if err != nil {
		return err
	}
	run, err := c.kc.RunToAnswer(c.ctx, info.Project, info.Workspace, info.RunID)
	if err != nil {
		return err
	}
	answer, err := run.Answer(c.ctx, runspec.ApprovalRequest{Approve: approve, Digest: req.Digest, Reason: req.Reason, By: c.subject.Name})
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, answer)
}

func cancelRun(c *call) error {
	body, err := c.readBody(true)
	if err != nil {
		return err
	}
	var req CancelRequest
	if err := decodeBody(body, &req); err != nil {
		return err
	}
	info, err := c.findRun(authz.Cancel)
	if err != nil {
		return err
	}
	if req.Reason == "" {
		req.Reason = "by " + c.subject.Name + " over the HTTP API"
	}
	run, err := c.kc.CancelRun(c.ctx, info.Project, info.RunID, req.Reason)
	if err != nil {
		return err
	}
	return c.json(http.StatusAccepted, c.started(run, info.Project, info.Workspace))
}

// visibilityLag bounds how long a run just started may be missing from
// Temporal's visibility store, where runs are looked up by ID: a poller that
// asks for the statusUrl of a 202 at once gets the run, not a 404.
const visibilityLag = 3 * time.Second

// retryUnlisted calls lookup until it finds the run or visibilityLag passes.
func retryUnlisted(ctx context.Context, lookup func() error) error {
	deadline := time.Now().Add(visibilityLag)
	for {
		err := lookup()
		if !errors.Is(err, client.ErrNoRun) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}
