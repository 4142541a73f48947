package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/gitrev"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
	"github.com/kumoproj/kumo/workflows"
)

// Request describes one run.
type Request struct {
	Project   string
	Workspace string
	Stack     string
	// Spec is the desired state (preview and apply). Without it, a preview or
	// apply generates the spec from the stack in StackDir.
	Spec *engine.Spec
	// Chart names the Helm chart Spec was rendered from, for the release.
	Chart *engine.ChartSource
	// StackDir is a stack directory (stack.yaml, app.yaml, inside a project).
	StackDir string
	// GitSource, instead of StackDir, names a git source: the run generates
	// from the commit its ref is at when the run starts (or GitCommit).
	GitSource string
	GitCommit string
	// git is the source commit a run generates from (resolved at start).
	git *engine.GitOrigin
	// GeneratorTimeout bounds each external generator call (default 60 s).
	GeneratorTimeout time.Duration
	// specHash names a spec already in the backend (rollback).
	specHash string
	// surgery is what a Forget or Move run changes in the record.
	surgery     *engine.Surgery
	rollbackOf  int
	Parallelism int
	AutoApprove bool
	// ApprovalTimeout is how long a run waits for approval (default 24 h).
	ApprovalTimeout time.Duration
	// RollbackOnFailure undoes a failed apply's changes (apply only).
	RollbackOnFailure bool
	Settings          runspec.RuntimeSettings
	// Wait is when an applied resource counts as done: "healthy" (default) or
	// "applied"; Timeout bounds each resource's wait (default 5m).
	Wait    string
	Timeout time.Duration
	// Label names the release an apply or rollback makes; without a source
	// commit, a stack in a git checkout gives its HEAD's.
	Label engine.ReleaseLabel
	// StartedBy is the name the run is said to be started by (default
	// user@host): recorded, marked unverified, only when no kumo frontend
	// stamps the authenticated subject (an existing cluster's).
	StartedBy string
	// Targets narrow a preview, apply or destroy to the resources these
	// addresses name and what they depend on (TargetDependents: and what
	// depends on them); the release records that it is partial.
	Targets          []string
	TargetDependents bool
	// AllowProtectedDelete lets the run delete protected resources; the run
	// refuses it to anyone but an admin of the project/workspace.
	AllowProtectedDelete bool
	// Queue puts an apply, destroy or rollback in the stack's run queue
	// instead of failing while another run holds the stack: the run starts
	// when the runs queued before it have ended (Run.Queued).
	Queue bool
}

// Run is a handle on one workflow execution.
type Run struct {
	c          *Client
	Operation  string
	WorkflowID string
	RunID      string
	// Queued is set for a run that waits in its stack's run queue: then
	// WorkflowID is the queue's and RunID the entry's, until
	// Queued.Started hands the run itself.
	Queued *QueuedEntry
}

// Preview starts a Preview run. Previews never block applies.
func (c *Client) Preview(ctx context.Context, req Request) (*Run, error) {
	id := fmt.Sprintf("%s/preview/%d", runspec.MutatingWorkflowID(req.Project, req.Workspace), time.Now().UnixNano())
	return c.start(ctx, runspec.PreviewWorkflow, id, req)
}

// Apply starts an Apply run; it fails with ErrBusy while another apply or
// destroy of the project+workspace is running.
func (c *Client) Apply(ctx context.Context, req Request) (*Run, error) {
	return c.start(ctx, runspec.ApplyWorkflow, runspec.MutatingWorkflowID(req.Project, req.Workspace), req)
}

// Refresh starts a Refresh run: what is live recorded as a new revision of
// the latest release's spec, nothing changed live.
func (c *Client) Refresh(ctx context.Context, req Request) (*Run, error) {
	latest, err := c.backend.LatestReleaseHead(ctx, req.Project, req.Workspace)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, fmt.Errorf("nothing to refresh: %s/%s has no releases", req.Project, req.Workspace)
	}
	if err != nil {
		return nil, err
	}
	if latest.Operation == engine.OperationDestroy && latest.Phase == engine.PhaseSucceeded {
		return nil, fmt.Errorf("nothing to refresh: revision %d of %s/%s destroyed the stack", latest.Revision, req.Project, req.Workspace)
	}
	req.Spec, req.StackDir, req.Stack, req.specHash = nil, "", latest.Stack, latest.SpecHash
	return c.start(ctx, runspec.RefreshWorkflow, runspec.MutatingWorkflowID(req.Project, req.Workspace), req)
}

// Forget starts a Forget run: the resources ids leave the latest release's
// record, as a new revision, and stay live, no longer managed by kumo.
func (c *Client) Forget(ctx context.Context, req Request, ids []string) (*Run, error) {
	return c.surgery(ctx, req, runspec.ForgetWorkflow, engine.Surgery{Forget: ids})
}

// Move starts a Move run: the resource recorded as from is recorded as to,
// the same live object under another ID, as a new revision; nothing live
// changes.
func (c *Client) Move(ctx context.Context, req Request, from, to string) (*Run, error) {
	return c.surgery(ctx, req, runspec.MoveWorkflow, engine.Surgery{Move: &engine.Moved{From: from, To: to}})
}

// surgery checks s's shape and that there is a release to change, and starts
// its run; the run checks the IDs against the release it starts from.
func (c *Client) surgery(ctx context.Context, req Request, workflowType string, s engine.Surgery) (*Run, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	latest, err := c.backend.LatestReleaseHead(ctx, req.Project, req.Workspace)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, fmt.Errorf("nothing to %s: %s/%s has no releases", s.Operation(), req.Project, req.Workspace)
	}
	if err != nil {
		return nil, err
	}
	req.Spec, req.StackDir, req.Stack, req.specHash, req.surgery = nil, "", latest.Stack, latest.SpecHash, &s
	return c.start(ctx, workflowType, runspec.MutatingWorkflowID(req.Project, req.Workspace), req)
}

// Destroy starts a Destroy run of everything the latest release recorded.
func (c *Client) Destroy(ctx context.Context, req Request) (*Run, error) {
	req.Spec = nil
	latest, err := c.backend.LatestReleaseHead(ctx, req.Project, req.Workspace)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, fmt.Errorf("nothing to destroy: %s/%s has no releases", req.Project, req.Workspace)
	}
	if err != nil {
		return nil, err
	}
	if latest.Phase.Final() && latest.Resources == 0 {
		return nil, fmt.Errorf("nothing to destroy: revision %d of %s/%s records no resources", latest.Revision, req.Project, req.Workspace)
	}
	return c.start(ctx, runspec.DestroyWorkflow, runspec.MutatingWorkflowID(req.Project, req.Workspace), req)
}

func (c *Client) start(ctx context.Context, workflowType, id string, req Request) (*Run, error) {
	in := runspec.RunInput{
		Project: req.Project, Workspace: req.Workspace, Stack: req.Stack, SpecHash: req.specHash, RollbackOf: req.rollbackOf, Chart: req.Chart,
		Parallelism: req.Parallelism, AutoApprove: req.AutoApprove, RollbackOnFailure: req.RollbackOnFailure, Settings: req.Settings,
		Wait: req.Wait, Timeout: req.Timeout, ApprovalTimeout: req.ApprovalTimeout,
		StartedBy: req.StartedBy, Label: req.Label, Surgery: req.surgery,
		Targets: req.Targets, TargetDependents: req.TargetDependents, AllowProtectedDelete: req.AllowProtectedDelete,
	}
	if err := checkTargets(workflowType, req); err != nil {
		return nil, err
	}
	if in.StartedBy == "" {
		in.StartedBy = startedBy()
	}
	if in.Label.SourceCommit == "" && req.StackDir != "" {
		// Not in a checkout, or one git cannot say the HEAD of: no commit.
		in.Label.SourceCommit, _ = gitrev.Head(req.StackDir)
	}
	if err := in.Label.Validate(); err != nil {
		return nil, err
	}
	switch {
	case req.Spec != nil:
		if err := req.Spec.Validate(); err != nil {
			return nil, err
		}
		hash, err := c.backend.PutSpec(ctx, req.Spec)
		if err != nil {
			return nil, err
		}
		in.SpecHash = hash
	case req.specHash == "" && req.StackDir == "" && req.GitSource == "" && (workflowType == runspec.PreviewWorkflow || workflowType == runspec.ApplyWorkflow):
		// Nothing named: the workspace's default source.
		name, err := c.DefaultSource(ctx, req.Workspace)
		if err != nil {
			return nil, err
		}
		req.GitSource = name
		if err := c.gitSource(ctx, &req, &in); err != nil {
			return nil, err
		}
	case req.specHash == "" && req.GitSource != "" && workflowType != runspec.DestroyWorkflow:
		if err := c.gitSource(ctx, &req, &in); err != nil {
			return nil, err
		}
	case req.specHash == "" && req.StackDir != "" && workflowType != runspec.DestroyWorkflow:
		src, err := c.source(ctx, &req)
		if err != nil {
			return nil, err
		}
		in.Source, in.Stack = src, req.Stack
	}
	if req.Queue {
		return c.enqueue(ctx, workflowType, req, in)
	}
	return c.startWorkflow(ctx, workflowType, id, req, in)
}

// startWorkflow starts a workflow of type workflowType with input in, refusing a
// second run with the same ID (one mutating run per project+workspace).
func (c *Client) startWorkflow(ctx context.Context, workflowType, id string, req Request, in any) (*Run, error) {
	tc, err := c.connect(ctx)
	if errors.Is(err, embedded.ErrLocked) {
		return nil, c.lockedByAnotherKumo(ctx, req, err)
	}
	if err != nil {
		return nil, err
	}
	operation := operations[workflowType]
	wr, err := tc.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                runspec.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// A worker in this process (a one-shot command's) gets the run's first
		// workflow task with the start's answer, not through matching; the
		// frontend grants that only to a worker (server/auth). Without one
		// the SDK asks nothing.
		EnableEagerStart: true,
		// Without this the SDK quietly hands back the running execution, and a second
		// apply would follow (and could answer the approval of) the first one.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            staticSummary(operation, req),
		StaticDetails:                            staticDetails(operation, req, in, c.PagesURL()),
		TypedSearchAttributes: runAttributes(req.Project, req.Workspace, req.Stack, operation,
			workflows.StatusAttr.ValueSet(string(runspec.StatusRunning))),
	}, workflowType, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		if s, serr := squatter(ctx, tc, req.Project, req.Workspace); serr == nil && s != nil {
			return nil, s
		}
		return nil, fmt.Errorf("%w on %s/%s: locked by run %s (workflow %s), which has not finished; wait for it, queue behind it with --queue, or run `kumo resume` if the kumo that started it was killed",
			ErrBusy, req.Project, req.Workspace, started.RunId, id)
	}
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) && strings.Contains(invalid.Error(), "search attribute") {
		return nil, fmt.Errorf("start %s: %w (register kumo's search attributes in namespace %s with `kumo temporal setup`)", operation, err, c.opts.Namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", operation, err)
	}
	return &Run{c: c, Operation: operation, WorkflowID: wr.GetID(), RunID: wr.GetRunID()}, nil
}

// lockedByAnotherKumo explains a locked embedded database: another kumo on this
// machine is running, and if it is changing this project+workspace, says which
// run.
func (c *Client) lockedByAnotherKumo(ctx context.Context, req Request, err error) error {
	latest, lerr := c.backend.LatestRelease(ctx, req.Project, req.Workspace)
	if lerr != nil || latest.Phase.Final() {
		return err
	}
	return fmt.Errorf("%w on %s/%s: revision %d is %s, locked by run %s (workflow %s) in another kumo process; wait for it, or run `kumo resume` if it was killed (%v)",
		ErrBusy, req.Project, req.Workspace, latest.Revision, latest.Phase, latest.RunID, latest.WorkflowID, err)
}

// operations names each workflow type as the KumoOperation search attribute does.
var operations = map[string]string{
	runspec.GenerateWorkflow: "generate", runspec.PreviewWorkflow: "preview", runspec.ApplyWorkflow: "apply",
	runspec.DestroyWorkflow: "destroy", runspec.RollbackWorkflow: "rollback", runspec.RefreshWorkflow: "refresh", runspec.DriftWorkflow: "drift",
	runspec.ForgetWorkflow: "forget", runspec.MoveWorkflow: "move",
	runspec.RemediateWorkflow: "remediate",
}

// Rollback starts a Rollback run to revision (0: the last succeeded revision
// before the latest). A failed revision is refused unless allowFailed.
func (c *Client) Rollback(ctx context.Context, req Request, revision int, allowFailed bool) (*Run, error) {
	target, err := c.rollbackTarget(ctx, req.Project, req.Workspace, revision, allowFailed)
	if err != nil {
		return nil, err
	}
	// The restored spec was rendered from the target's chart, if any.
	req.Spec, req.specHash, req.rollbackOf, req.Chart = nil, target.SpecHash, target.Revision, target.Chart
	return c.start(ctx, runspec.RollbackWorkflow, runspec.MutatingWorkflowID(req.Project, req.Workspace), req)
}

// RevisionOfVersion is the revision of project+workspace an apply named
// version (--version), for rollback --version.
func (c *Client) RevisionOfVersion(ctx context.Context, project, workspace, version string) (int, error) {
	return release.New(c.backend, nil, nil).RevisionOfVersion(ctx, project, workspace, version)
}

func (c *Client) rollbackTarget(ctx context.Context, project, workspace string, revision int, allowFailed bool) (*engine.Release, error) {
	return release.New(c.backend, nil, nil).RollbackTarget(ctx, project, workspace, revision, allowFailed)
}

// Unfinished returns the apply or destroy of project+workspace that is still
// running (for `kumo resume`), or nil.
func (c *Client) Unfinished(ctx context.Context, project, workspace string) (*Run, error) {
	tc, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	info, err := lockHolder(ctx, tc, project, workspace)
	if err != nil || info == nil {
		return nil, err
	}
	if s := squatterOf(ctx, tc, project, workspace, info); s != nil {
		return nil, s
	}
	id := info.GetExecution().GetWorkflowId()
	operation := operations[info.GetType().GetName()]
	return &Run{c: c, Operation: operation, WorkflowID: id, RunID: info.GetExecution().GetRunId()}, nil
}

// runAttributes are the search attributes a run (or a schedule of runs) is
// filed under in the Web UI, plus extra.
func runAttributes(project, workspace, stack, operation string, extra ...temporal.SearchAttributeUpdate) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(append([]temporal.SearchAttributeUpdate{
		workflows.ProjectAttr.ValueSet(project),
		workflows.WorkspaceAttr.ValueSet(workspace),
		workflows.StackAttr.ValueSet(stack),
		workflows.OperationAttr.ValueSet(operation),
	}, extra...)...)
}

// Progress asks the run where it is: every resource's progress, and the
// preview's changes once there is one.
func (r *Run) Progress(ctx context.Context) (runspec.Progress, error) {
	p, _, err := r.ProgressSince(ctx, 0, true)
	return p, err
}

// The pages a progress is asked in: each answer stays well under a payload's
// limit (2 MB), however many resources the run has.
const (
	progressPageNodes   = 4000
	progressPageChanges = 1000
)

// ProgressSince asks the run where it is and which resources changed since
// seq (a value it returned before; 0: all of them), with the preview's changes
// when withChanges. It returns the seq to ask from next time. A client that
// follows a run asks this several times a second, so the run answers only
// what changed, a page at a time. A run older than ProgressPageQuery answers
// everything at once, and seq stays 0.
func (r *Run) ProgressSince(ctx context.Context, seq uint64, withChanges bool) (runspec.Progress, uint64, error) {
	req := runspec.ProgressRequest{Since: seq, MaxNodes: progressPageNodes}
	if withChanges {
		req.MaxChanges = progressPageChanges
	}
	var p runspec.Progress
	next := uint64(0)
	for first := true; ; first = false {
		page, err := r.progressPage(ctx, req)
		if first && isUnknownQuery(err) {
			full, err := r.fullProgress(ctx)
			return full, 0, err
		}
		if err != nil {
			return p, seq, err
		}
		if first {
			// Whatever changes while the pages are asked for is answered again
			// next time: nothing is missed.
			p, next = page.Progress, page.Seq
			p.Nodes = make([]runspec.Node, 0, len(page.Nodes))
			if withChanges && page.Digest != "" {
				p.Changes = make([]engine.Change, 0, page.TotalChanges)
			}
		}
		p.Nodes = append(p.Nodes, page.Nodes...)
		if p.Changes != nil {
			p.Changes = append(p.Changes, page.Changes...)
		}
		req.NodesFrom, req.MaxNodes = page.NextNode, progressPageNodes
		if page.NextNode == 0 {
			req.MaxNodes = 0
		}
		req.ChangesFrom += len(page.Changes)
		if p.Changes == nil || req.ChangesFrom >= page.TotalChanges || len(page.Changes) == 0 {
			req.MaxChanges = 0
		}
		if req.MaxNodes == 0 && req.MaxChanges == 0 {
			break
		}
	}
	r.addLive(ctx, &p)
	return p, next, nil
}

func (r *Run) progressPage(ctx context.Context, req runspec.ProgressRequest) (runspec.ProgressPage, error) {
	var page runspec.ProgressPage
	v, err := r.c.temporal.QueryWorkflow(ctx, r.WorkflowID, r.RunID, runspec.ProgressPageQuery, req)
	if err != nil {
		return page, err
	}
	return page, v.Get(&page)
}

// fullProgress asks a run older than ProgressPageQuery for its whole progress.
func (r *Run) fullProgress(ctx context.Context) (runspec.Progress, error) {
	var p runspec.Progress
	v, err := r.c.temporal.QueryWorkflow(ctx, r.WorkflowID, r.RunID, runspec.ProgressQuery)
	if err != nil {
		return p, err
	}
	if err := v.Get(&p); err != nil {
		return p, err
	}
	r.addLive(ctx, &p)
	return p, nil
}

// isUnknownQuery reports whether err is a run's answer that it has no such
// query: a run recorded before it was added.
func isUnknownQuery(err error) bool {
	var failed *serviceerror.QueryFailed
	return errors.As(err, &failed) && strings.Contains(failed.Error(), "unknown queryType")
}

// Wait blocks until the run ends. A run whose release failed returns its Result
// and an error saying why.
func (r *Run) Wait(ctx context.Context) (runspec.Result, error) {
	var res runspec.Result
	err := r.wait(ctx, &res)
	if errors.Is(err, errCancelled) && res.Error != "" {
		err = fmt.Errorf("revision %d failed: %s", res.Revision, res.Error)
	}
	return res, err
}

// errCancelled is wait's error for a run that ended cancelled.
var errCancelled = errors.New("the run was cancelled")

// wait blocks until the run ends and decodes its result (or, for a failed
// release, the result carried by its error) into res.
func (r *Run) wait(ctx context.Context, res any) error {
	err := r.c.temporal.GetWorkflow(ctx, r.WorkflowID, r.RunID).Get(ctx, res)
	if err == nil {
		return nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if app.HasDetails() {
			_ = app.Details(res)
		}
		return errors.New(app.Message())
	}
	var cancelled *temporal.CanceledError
	if errors.As(err, &cancelled) {
		if cancelled.HasDetails() {
			_ = cancelled.Details(res)
		}
		return errCancelled
	}
	return err
}
