package client

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/planpolicy"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server"
	"github.com/kumoproj/kumo/worker"
)

// queryTimeout bounds asking a run for its progress: with an external
// Temporal and no worker running, nobody answers.
const queryTimeout = 10 * time.Second

// RunDetails is everything `kumo run show` says about a run.
type RunDetails struct {
	RunInfo
	// Stage is where a running run is (from its progress).
	Stage runspec.Stage `json:"stage,omitempty"`
	// Waiting says why a running run stands still (Progress.Waiting).
	Waiting string `json:"waiting,omitempty"`
	// Error says why a run failed or was cancelled.
	Error        string               `json:"error,omitempty"`
	Compensation *engine.Compensation `json:"compensation,omitempty"`
	// Resources are the per-resource outcomes, in plan order.
	Resources []ResourceOutcome `json:"resources,omitempty"`
	// ProgressError says why Resources are missing: the run could not be asked.
	ProgressError string `json:"progressError,omitempty"`
	// URL is the run's page in the Temporal Web UI, when a UI is known.
	URL string `json:"url,omitempty"`
	// Page is the run's own page (plan side by side, outcomes, release),
	// when a server serving it is known.
	Page string `json:"page,omitempty"`
	// People are who started the run and who approved, rejected or
	// cancelled it, with when (from the run itself; none from runs older
	// than this record).
	People *engine.People `json:"people,omitempty"`
	// Policies are the plan policy rules the run's plan violated.
	Policies []planpolicy.Violation `json:"policies,omitempty"`
	// Target is what a partial run was narrowed to (--target).
	Target *engine.Targeting `json:"target,omitempty"`
}

// ResourceOutcome is what one resource's step did in a run.
type ResourceOutcome struct {
	ID     string             `json:"id"`
	Action engine.Action      `json:"action,omitempty"`
	Result runspec.NodeStatus `json:"result"`
	// Duration of the resource's apply or delete; zero when it did none (or
	// the run is older than these times).
	Duration time.Duration `json:"duration,omitempty"`
	Started  time.Time     `json:"started,omitzero"`
	Error    string        `json:"error,omitempty"`
}

// ShowRun describes a run of project: its listing, its progress (asked from
// the run itself, which Temporal answers for finished runs too by replaying
// them), and how it ended.
func (c *Client) ShowRun(ctx context.Context, project, runID string) (*RunDetails, error) {
	d, _, err := c.showRun(ctx, project, runID, false)
	return d, err
}

// RunPlan is a run's preview: its changes, one per resource, as `kumo
// preview` shows them (sensitive values masked), and their digest.
type RunPlan struct {
	Changes []engine.Change `json:"changes"`
	Digest  string          `json:"digest,omitempty"`
}

// ShowRunPlan is ShowRun with the run's preview, from the same answer of the
// run; the plan is nil before the preview, and for runs that have none
// (generate) or could not be asked.
func (c *Client) ShowRunPlan(ctx context.Context, project, runID string) (*RunDetails, *RunPlan, error) {
	return c.showRun(ctx, project, runID, true)
}

func (c *Client) showRun(ctx context.Context, project, runID string, wantPlan bool) (*RunDetails, *RunPlan, error) {
	info, err := c.FindRun(ctx, project, runID)
	if err != nil {
		return nil, nil, err
	}
	if err := c.answerQueries(); err != nil {
		return nil, nil, err
	}
	run := c.runOf(info)
	d := &RunDetails{RunInfo: *info, URL: c.RunURL(info.WorkflowID, info.RunID), Page: c.RunPageURL(info.RunID)}
	if info.Operation == "generate" { // one step, no resources, no progress query
		_, err := c.addOutcome(ctx, run, d)
		return d, nil, err
	}
	var plan *RunPlan
	if !d.Running() && !wantPlan {
		// An ended run's result says how each resource ended: one event of
		// its record, where asking the run replays its whole history.
		res, err := c.addOutcome(ctx, run, d)
		if err != nil || res.Outcome == nil || res.Outcome.Nodes == nil && res.Outcome.Total > 0 {
			if err == nil {
				err = c.askProgress(ctx, run, d, &plan, false)
			}
			return d, nil, err
		}
		nodes, err := runspec.UnpackNodes(res.Outcome.Nodes)
		if err != nil {
			return d, nil, fmt.Errorf("run %s: %w", info.RunID, err)
		}
		d.Resources, d.People, d.Target = outcomes(nodes), res.People, res.Target
		d.Stage = runspec.StageDone
		return d, nil, nil
	}
	if err := c.askProgress(ctx, run, d, &plan, true); err != nil {
		return d, plan, err
	}
	res, err := c.addOutcome(ctx, run, d)
	if plan == nil && res.Changes != nil { // the run could not be asked, its result tells
		plan = &RunPlan{Changes: res.Changes, Digest: res.Digest}
	}
	return d, plan, err
}

// askProgress adds what the run answers about its progress to d (and its
// preview to plan, withPlan); a run that does not answer is said in
// d.ProgressError.
func (c *Client) askProgress(ctx context.Context, run *Run, d *RunDetails, plan **RunPlan, withPlan bool) error {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	p, _, err := run.ProgressSince(qctx, 0, withPlan || d.Changes == nil)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		d.ProgressError = fmt.Sprintf("the run did not answer (%v); is a kumo worker running?", err)
		return nil
	}
	d.Stage, d.Waiting, d.People, d.Policies, d.Target = p.Stage, p.Waiting, p.People, p.Policies, p.Target
	d.Resources = outcomes(p.Nodes)
	if d.Changes == nil && p.Changes != nil { // a run older than the memo
		counts := runspec.CountChanges(p.Changes)
		d.Changes = &counts
	}
	if withPlan && p.Changes != nil {
		*plan = &RunPlan{Changes: p.Changes, Digest: p.Digest}
	}
	return nil
}

// addOutcome adds how an ended run ended to d, and returns its result.
func (c *Client) addOutcome(ctx context.Context, run *Run, d *RunDetails) (runspec.Result, error) {
	var res runspec.Result
	if d.Running() {
		return res, nil
	}
	if err := run.wait(ctx, &res); err != nil {
		if ctx.Err() != nil {
			return res, err
		}
		d.Error = err.Error()
	}
	d.Compensation = res.Compensation
	if res.Policies != nil {
		d.Policies = res.Policies
	}
	if res.Error != "" {
		d.Error = res.Error
	}
	return res, nil
}

func outcomes(nodes []runspec.Node) []ResourceOutcome {
	out := make([]ResourceOutcome, len(nodes))
	for i, n := range nodes {
		out[i] = ResourceOutcome{ID: n.ID, Action: n.Action, Result: n.Status, Started: n.Started, Error: n.Error}
		if !n.Started.IsZero() && !n.Finished.IsZero() {
			out[i].Duration = n.Finished.Sub(n.Started)
		}
	}
	return out
}

// answerQueries makes sure someone answers a run's queries. An external
// Temporal has its workers; the embedded server gets a worker in this process
// that polls workflow tasks only, so looking at runs does not take on the
// activities of one left unfinished by a killed kumo.
func (c *Client) answerQueries() error {
	if c.server == nil || c.worker != nil {
		return nil
	}
	w := worker.NewQueryOnly(c.temporal, c.backend)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start the in-process worker: %w", err)
	}
	c.worker = w
	return nil
}

// OpenRun returns a handle on a run of project, to follow or cancel it. With
// the embedded server the in-process worker starts too, so a run left
// unfinished by a killed kumo goes on, as with `kumo resume`.
func (c *Client) OpenRun(ctx context.Context, project, runID string) (*Run, *RunInfo, error) {
	info, err := c.FindRun(ctx, project, runID)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.connect(ctx); err != nil {
		return nil, nil, err
	}
	return c.runOf(info), info, nil
}

func (c *Client) runOf(info *RunInfo) *Run {
	return &Run{c: c, Operation: info.Operation, WorkflowID: info.WorkflowID, RunID: info.RunID}
}

// Info describes the run as visibility's list does, from Temporal's record of
// it (current, where a list may lag).
func (r *Run) Info(ctx context.Context) (*RunInfo, error) {
	d, err := r.c.temporal.DescribeWorkflowExecution(ctx, r.WorkflowID, r.RunID)
	if err != nil {
		return nil, err
	}
	info := runInfo(d.GetWorkflowExecutionInfo(), r.c.DataConverter())
	return &info, nil
}

// UIBaseURL is the Temporal Web UI's address: Options.UIBaseURL, else the UI of
// the kumo server this client attached to, else "" (no UI known).
func (c *Client) UIBaseURL() string {
	if c.opts.UIBaseURL == "" && c.attached != nil {
		return strings.TrimRight(c.attached.UIURL, "/")
	}
	return strings.TrimRight(c.opts.UIBaseURL, "/")
}

// RunURL is a run's page in the Temporal Web UI, or "" when no UI is known.
func (c *Client) RunURL(workflowID, runID string) string {
	ui := server.Info{UIURL: c.UIBaseURL(), Namespace: c.opts.Namespace}
	return ui.RunURL(workflowID, runID)
}

// PagesURL is the root of the run pages: Options.PagesURL, else the HTTP
// API of the kumo server the client attached to, or "" (no pages known).
func (c *Client) PagesURL() string {
	if c.opts.PagesURL == "" && c.attached != nil {
		// A kumo server serves the pages beside its HTTP API.
		return strings.TrimRight(c.attached.APIURL, "/")
	}
	return strings.TrimRight(c.opts.PagesURL, "/")
}

// RunPageURL is a run's own page, or "" when no server of pages is known.
func (c *Client) RunPageURL(runID string) string {
	root := c.PagesURL()
	if root == "" {
		return ""
	}
	return root + "/runs/" + url.PathEscape(runID)
}
