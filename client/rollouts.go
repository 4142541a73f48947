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

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/gitsource"
	"github.com/kumoproj/kumo/engine/rollout"
	"github.com/kumoproj/kumo/internal/gitrev"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/workflows"
)

// RolloutRequest describes a rollout of one stack across workspaces.
type RolloutRequest struct {
	Project string
	// StackDir is the stack every workspace's apply generates from, or
	// GitSource names a git source whose commit they generate from: the
	// commit its ref is at when the rollout starts, or GitCommit.
	StackDir  string
	GitSource string
	GitCommit string
	// Spec holds the waves, as written; StartRollout resolves them against
	// the workspaces that exist.
	Spec             rollout.Spec
	GeneratorTimeout time.Duration
	// Parallelism, AutoApprove, ApprovalTimeout, Wait and Timeout go to
	// every apply (as Request's do).
	Parallelism     int
	AutoApprove     bool
	ApprovalTimeout time.Duration
	Wait            string
	Timeout         time.Duration
	StartedBy       string
}

// Rollout is a handle on one rollout.
type Rollout struct {
	c          *Client
	Project    string
	Name       string
	WorkflowID string
	RunID      string
	// Git is the source and commit every apply deploys (a rollout from a
	// git source, as started).
	Git *engine.GitOrigin
}

// StartRollout resolves req's waves against the workspaces, checks the
// stack for each (its project, the workspace's generator trust) and starts
// the Rollout; a rollout of the same name still running refuses it.
func (c *Client) StartRollout(ctx context.Context, req RolloutRequest) (*Rollout, *rollout.Plan, error) {
	names, err := c.Workspaces(ctx)
	if err != nil {
		return nil, nil, err
	}
	plan, err := rollout.Resolve(req.Spec, names)
	if err != nil {
		return nil, nil, fmt.Errorf("rollout %s: %w", req.Spec.Name, err)
	}
	var git *engine.GitOrigin
	if req.GitSource != "" {
		if git, err = c.rolloutCommit(ctx, &req); err != nil {
			return nil, nil, fmt.Errorf("rollout %s: %w", plan.Name, err)
		}
	}
	in := runspec.RolloutInput{
		Project: req.Project, Plan: plan, Settings: map[string]runspec.RuntimeSettings{},
		Parallelism: req.Parallelism, AutoApprove: req.AutoApprove, ApprovalTimeout: req.ApprovalTimeout,
		Wait: req.Wait, Timeout: req.Timeout, StartedBy: req.StartedBy,
	}
	if in.StartedBy == "" {
		in.StartedBy = startedBy()
	}
	for _, ws := range plan.Workspaces() {
		s, err := c.Settings(ctx, ws, runspec.RuntimeSettings{})
		if err != nil {
			return nil, nil, fmt.Errorf("workspace %s: %w", ws, err)
		}
		in.Settings[ws] = s
		if git != nil {
			continue
		}
		one := Request{Project: req.Project, Workspace: ws, StackDir: req.StackDir, GeneratorTimeout: req.GeneratorTimeout}
		src, err := c.source(ctx, &one)
		if err != nil {
			return nil, nil, fmt.Errorf("workspace %s: %w", ws, err)
		}
		in.Stack, in.Source = one.Stack, runspec.RolloutSource{StackDir: src.StackDir, GeneratorTimeout: src.GeneratorTimeout}
	}
	if git != nil {
		src, _ := c.Source(ctx, git.Source)
		in.Stack, in.Source, in.SourceCommit = src.Stack, runspec.RolloutSource{Git: git, GeneratorTimeout: req.GeneratorTimeout}, git.Commit
	} else {
		in.SourceCommit, _ = gitrev.Head(req.StackDir)
	}
	tc, err := c.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	id := runspec.RolloutWorkflowID(req.Project, plan.Name)
	wr, err := tc.ExecuteWorkflow(workflows.WithRolloutScope(ctx, plan.Workspaces()), sdkclient.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                runspec.TaskQueue,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            fmt.Sprintf("rollout %s of %s/%s: %d waves, %d workspaces", plan.Name, req.Project, in.Stack, len(plan.Waves), len(plan.Workspaces())),
		StaticDetails:                            rolloutDetails(req, in),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.ProjectAttr.ValueSet(req.Project),
			workflows.StackAttr.ValueSet(in.Stack),
			workflows.OperationAttr.ValueSet("rollout"),
			workflows.StatusAttr.ValueSet(string(runspec.StatusRunning)),
		),
	}, runspec.RolloutWorkflow, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil, nil, fmt.Errorf("%w: rollout %s of %s is still running (run %s); see kumo rollout status %s", ErrBusy, plan.Name, req.Project, started.RunId, plan.Name)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("start rollout %s: %w", plan.Name, err)
	}
	return &Rollout{c: c, Project: req.Project, Name: plan.Name, WorkflowID: id, RunID: wr.GetRunID(), Git: git}, &plan, nil
}

// rolloutCommit resolves a rollout's git source once, to the commit its ref
// is at now (or req.GitCommit): every apply of the rollout deploys that
// commit, whatever is pushed while it runs. The rollout is of the source's
// project.
func (c *Client) rolloutCommit(ctx context.Context, req *RolloutRequest) (*engine.GitOrigin, error) {
	if req.StackDir != "" {
		return nil, errors.New("give a stack directory or a git source, not both")
	}
	src, err := c.Source(ctx, req.GitSource)
	if err != nil {
		return nil, err
	}
	if req.Project != "" && req.Project != src.Project {
		return nil, fmt.Errorf("source %s deploys project %s, not %s", src.Name, src.Project, req.Project)
	}
	req.Project = src.Project
	commit := req.GitCommit
	if commit == "" {
		if commit, err = (&gitsource.Git{}).Resolve(ctx, src); err != nil {
			return nil, err
		}
	} else if err := gitsource.CheckCommit(commit); err != nil {
		return nil, err
	}
	return &engine.GitOrigin{Source: src.Name, URL: src.URL, Ref: src.Ref, Commit: commit, Path: src.Path}, nil
}

// rolloutDetails is the Web UI's static details of a rollout: its waves.
func rolloutDetails(req RolloutRequest, in runspec.RolloutInput) string {
	var b strings.Builder
	from := in.Source.StackDir
	if g := in.Source.Git; g != nil {
		from = fmt.Sprintf("git source %s: %s@%s, commit %s, path %s", g.Source, g.URL, g.Ref, g.Commit, g.Path)
	}
	fmt.Fprintf(&b, "**kumo rollout** `%s` of project `%s`, stack `%s` from `%s`", in.Plan.Name, req.Project, in.Stack, from)
	if in.Plan.UndoOnFailure {
		b.WriteString(", undone on failure")
	}
	b.WriteString("\n\n")
	for i, w := range in.Plan.Waves {
		fmt.Fprintf(&b, "%d. **%s**: %s (at most %d at once, bake %s, failure threshold %s", i+1, w.Name, strings.Join(w.Workspaces, ", "), w.MaxParallel, w.Bake, w.FailureThreshold)
		if w.Approval {
			b.WriteString(", needs approval")
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// RolloutOf is a handle on rollout name of project (its latest run).
func (c *Client) RolloutOf(ctx context.Context, project, name string) (*Rollout, error) {
	if err := rollout.CheckName(name); err != nil {
		return nil, err
	}
	if _, err := c.dial(ctx); err != nil {
		return nil, err
	}
	return &Rollout{c: c, Project: project, Name: name, WorkflowID: runspec.RolloutWorkflowID(project, name)}, nil
}

// Status queries the rollout: waves × workspaces with state and revision.
// A query of an ended rollout needs a worker (kumo server, or this
// process's, which connect starts).
func (r *Rollout) Status(ctx context.Context) (runspec.RolloutStatus, error) {
	tc, err := r.c.connect(ctx)
	if err != nil {
		return runspec.RolloutStatus{}, err
	}
	v, err := tc.QueryWorkflow(ctx, r.WorkflowID, r.RunID, runspec.RolloutStatusQuery)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return runspec.RolloutStatus{}, notFound("no rollout %s in project %s", r.Name, r.Project)
	}
	if err != nil {
		return runspec.RolloutStatus{}, err
	}
	var st runspec.RolloutStatus
	return st, v.Get(&st)
}

// Control pauses, resumes or aborts the rollout (runspec.RolloutPause, ...),
// or approves the wave awaiting approval (runspec.RolloutApprove). The
// request names the workspaces it acts on, which kumo's frontend decides on
// one by one.
func (r *Rollout) Control(ctx context.Context, action, reason string) (runspec.RolloutStatus, error) {
	st, err := r.Status(ctx)
	if err != nil {
		return st, err
	}
	switch st.State {
	case runspec.RolloutSucceeded, runspec.RolloutFailed, runspec.RolloutAborted:
		return st, fmt.Errorf("rollout %s is %s: nothing to %s", r.Name, st.State, action)
	}
	update, req := runspec.RolloutControlUpdate, runspec.RolloutControl{Action: action, Reason: reason, By: startedBy()}
	var workspaces []string
	if action == runspec.RolloutApprove {
		update = runspec.RolloutApproveUpdate
		for _, w := range st.Waves {
			if w.State == runspec.RolloutAwaitingApproval {
				req.Wave = w.Name
				for _, s := range w.Workspaces {
					workspaces = append(workspaces, s.Workspace)
				}
			}
		}
		if req.Wave == "" {
			return st, fmt.Errorf("rollout %s has no wave awaiting approval (it is %s)", r.Name, st.State)
		}
	} else {
		for _, w := range st.Waves {
			for _, s := range w.Workspaces {
				workspaces = append(workspaces, s.Workspace)
			}
		}
	}
	tc, err := r.c.connect(ctx)
	if err != nil {
		return st, err
	}
	sctx := workflows.WithRolloutScope(ctx, workspaces)
	h, err := tc.UpdateWorkflow(sctx, sdkclient.UpdateWorkflowOptions{
		WorkflowID: r.WorkflowID, RunID: r.RunID, UpdateName: update, Args: []any{req},
		WaitForStage: sdkclient.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return st, err
	}
	err = h.Get(sctx, &st)
	return st, err
}

// Wait waits for the rollout to end and returns its last status; a failed
// or aborted rollout returns its status and an error saying why.
func (r *Rollout) Wait(ctx context.Context) (runspec.RolloutStatus, error) {
	tc, err := r.c.connect(ctx)
	if err != nil {
		return runspec.RolloutStatus{}, err
	}
	var st runspec.RolloutStatus
	err = tc.GetWorkflow(ctx, r.WorkflowID, r.RunID).Get(ctx, &st)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		_ = app.Details(&st)
		return st, errors.New(app.Message())
	}
	return st, err
}
