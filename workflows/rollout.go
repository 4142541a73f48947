package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/rollout"
	"github.com/kumoproj/kumo/runspec"
)

// Rollout applies one stack to many workspaces, wave after wave (an
// engine/rollout Plan). It only orchestrates: each workspace's apply is an
// ordinary Apply run started as a child with the workspace's own ID
// (kumo/<project>/<workspace>), so it takes the stack's lock, makes its own
// release and waits for the approvals its workspace's policies require; a
// wave's health is read by StackStatus children; the undo is Rollback
// children. A wave starts once the one before passed (its applies succeeded
// within its failure threshold and their resources stayed healthy for its
// bake time), the rollout is not paused, and the wave's approval, if it
// needs one, was given. A wave that fails beyond its threshold stops the
// rollout; with Plan.UndoOnFailure every workspace it changed is rolled back
// to its previous revision, newest first (rollout.UndoPlan).
//
// The children outlive the rollout (ParentClosePolicy abandon): an apply is
// never cut off half-way. Abort stops starting applies and waits for those
// running.
func Rollout(ctx workflow.Context, in runspec.RolloutInput) (runspec.RolloutStatus, error) {
	r, err := newRollout(ctx, in)
	if err != nil {
		return runspec.RolloutStatus{}, temporal.NewNonRetryableApplicationError(err.Error(), "RolloutRefused", nil)
	}
	failure := r.run(ctx)
	if failure != "" && in.Plan.UndoOnFailure && !r.aborted {
		r.undo(ctx)
	}
	return r.finish(ctx, failure)
}

// bakeChecks bounds how often a wave's health is read while it bakes: at
// most every bakeInterval, and at most maxBakeChecks times, so that a long
// bake does not fill the history.
const (
	bakeInterval  = 30 * time.Second
	maxBakeChecks = 10
)

// defaultRolloutApprovalTimeout is how long a wave waits for its approval.
const defaultRolloutApprovalTimeout = 24 * time.Hour

type rolloutRun struct {
	in      runspec.RolloutInput
	st      runspec.RolloutStatus
	starter runspec.Subject
	// scope is what the frontend found the starter may do on each workspace
	// (RolloutScopeHeader of the start).
	scope   runspec.RolloutScope
	paused  bool
	aborted bool
	// approved[i]: wave i was approved.
	approved map[int]bool
	// waiting is the index of the wave awaiting approval (-1: none).
	waiting  int
	ended    bool
	seq      int
	outcomes []rollout.Outcome
	priors   map[string]activities.PriorRelease
}

func newRollout(ctx workflow.Context, in runspec.RolloutInput) (*rolloutRun, error) {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	if id != runspec.RolloutWorkflowID(in.Project, in.Plan.Name) {
		return nil, fmt.Errorf("workflow %s is not the ID of rollout %s of project %s (%s): refused", id, in.Plan.Name, in.Project, runspec.RolloutWorkflowID(in.Project, in.Plan.Name))
	}
	if len(in.Plan.Waves) == 0 {
		return nil, errors.New("rollout has no wave")
	}
	r := &rolloutRun{in: in, approved: map[int]bool{}, waiting: -1, priors: map[string]activities.PriorRelease{}}
	sig := signalsOf(ctx)
	r.starter = sig.starter(in.StartedBy)
	if sig != nil {
		r.scope = sig.startScope
	}
	r.st = runspec.RolloutStatus{Project: in.Project, Name: in.Plan.Name, Stack: in.Stack, State: runspec.RolloutRunning,
		StartedBy: r.starter.Actor(workflow.GetInfo(ctx).WorkflowStartTime, ""), Undo: in.Plan.UndoOnFailure, Git: in.Source.Git}
	for _, w := range in.Plan.Waves {
		wave := runspec.RolloutWave{Name: w.Name, State: runspec.RolloutPending, Approval: w.Approval, Bake: w.Bake, Threshold: w.FailureThreshold.String()}
		for _, ws := range w.Workspaces {
			wave.Workspaces = append(wave.Workspaces, runspec.RolloutWorkspace{Workspace: ws, State: runspec.RolloutPending})
		}
		r.st.Waves = append(r.st.Waves, wave)
	}
	if err := workflow.SetQueryHandler(ctx, runspec.RolloutStatusQuery, func() (runspec.RolloutStatus, error) { return r.st, nil }); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, runspec.RolloutControlUpdate,
		func(ctx workflow.Context, req runspec.RolloutControl) (runspec.RolloutStatus, error) {
			who := subjectOf(ctx, req.By)
			if err := r.validateControl(ctx, who, req); err != nil {
				return r.st, err
			}
			r.control(ctx, who, req)
			return r.st, nil
		}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, req runspec.RolloutControl) error {
			return r.validateControl(ctx, subjectOf(ctx, req.By), req)
		}}); err != nil {
		return nil, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, runspec.RolloutApproveUpdate,
		func(ctx workflow.Context, req runspec.RolloutControl) (runspec.RolloutStatus, error) {
			who := subjectOf(ctx, req.By)
			if err := r.validateApprove(ctx, who, req); err != nil {
				return r.st, err
			}
			r.approved[r.waiting] = true
			r.st.Actions = append(r.st.Actions, runspec.RolloutAction{Action: runspec.RolloutApprove, Wave: req.Wave, By: who.Actor(workflow.Now(ctx), req.Reason)})
			return r.st, nil
		}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, req runspec.RolloutControl) error {
			return r.validateApprove(ctx, subjectOf(ctx, req.By), req)
		}}); err != nil {
		return nil, err
	}
	r.details(ctx)
	return r, nil
}

// run carries out the waves; it returns why the rollout failed ("" when it
// did not).
func (r *rolloutRun) run(ctx workflow.Context) string {
	for i, w := range r.in.Plan.Waves {
		r.st.Wave = i
		wave := &r.st.Waves[i]
		if msg := r.gate(ctx, i); msg != "" {
			wave.State = runspec.RolloutFailed
			return msg
		}
		if r.aborted {
			return ""
		}
		wave.State = runspec.RolloutApplying
		r.details(ctx)
		r.applyWave(ctx, i)
		failed := r.failedIn(i)
		if len(failed) > 0 && w.FailureThreshold.Exceeded(len(failed), len(w.Workspaces)) {
			wave.State = runspec.RolloutFailed
			return fmt.Sprintf("wave %s: %d of %d workspaces failed (%s), more than its failure threshold %s allows", w.Name, len(failed), len(w.Workspaces), strings.Join(failed, "; "), w.FailureThreshold)
		}
		if r.aborted {
			wave.State = runspec.RolloutFailed
			return ""
		}
		wave.State = runspec.RolloutBaking
		r.details(ctx)
		r.bake(ctx, i)
		failed = r.failedIn(i)
		if len(failed) > 0 && w.FailureThreshold.Exceeded(len(failed), len(w.Workspaces)) {
			wave.State = runspec.RolloutFailed
			return fmt.Sprintf("wave %s: %d of %d workspaces failed or were unhealthy while baking (%s), more than its failure threshold %s allows", w.Name, len(failed), len(w.Workspaces), strings.Join(failed, "; "), w.FailureThreshold)
		}
		wave.State = runspec.RolloutPassed
		r.details(ctx)
	}
	return ""
}

// gate waits until wave i may start: not paused, and approved if it needs
// an approval. It returns a failure when the approval did not come in time.
func (r *rolloutRun) gate(ctx workflow.Context, i int) string {
	w := r.in.Plan.Waves[i]
	if w.Approval && !r.aborted {
		r.waiting = i
		r.st.Waves[i].State = runspec.RolloutAwaitingApproval
		r.details(ctx)
		timeout := r.in.ApprovalTimeout
		if timeout <= 0 {
			timeout = defaultRolloutApprovalTimeout
		}
		ok, err := workflow.AwaitWithTimeout(ctx, timeout, func() bool { return r.approved[i] || r.aborted })
		r.waiting = -1
		if err != nil || (!ok && !r.aborted) {
			return fmt.Sprintf("wave %s was not approved within %s", w.Name, timeout)
		}
	}
	if r.paused && !r.aborted {
		r.details(ctx)
	}
	_ = workflow.Await(ctx, func() bool { return !r.paused || r.aborted })
	return ""
}

// applyWave applies every workspace of wave i, at most MaxParallel at once,
// starting none while paused and none after an abort.
func (r *rolloutRun) applyWave(ctx workflow.Context, i int) {
	w := r.in.Plan.Waves[i]
	active := 0
	wg := workflow.NewWaitGroup(ctx)
	for j := range w.Workspaces {
		_ = workflow.Await(ctx, func() bool { return r.aborted || (!r.paused && active < w.MaxParallel) })
		if r.aborted {
			break
		}
		active++
		wg.Add(1)
		workflow.Go(ctx, func(gctx workflow.Context) {
			defer wg.Done()
			defer func() { active-- }()
			r.applyOne(gctx, i, j)
		})
	}
	wg.Wait(ctx)
}

// childOptions are the options of a child run on workspace ws: the
// stack's own ID (so it takes the stack's lock), abandoned rather than cut
// off when the rollout ends, filed under the workspace in the Web UI.
func (r *rolloutRun) childOptions(ctx workflow.Context, ws, op, summary string) workflow.Context {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            runspec.MutatingWorkflowID(r.in.Project, ws),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		StaticSummary:         summary,
		StaticDetails:         fmt.Sprintf("Part of rollout **%s** (%s).", r.in.Plan.Name, runspec.RolloutWorkflowID(r.in.Project, r.in.Plan.Name)),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			ProjectAttr.ValueSet(r.in.Project),
			StackAttr.ValueSet(r.in.Stack),
			WorkspaceAttr.ValueSet(ws),
			OperationAttr.ValueSet(op),
			StatusAttr.ValueSet(string(runspec.StatusRunning)),
		),
	})
	if !r.starter.Verified {
		return cctx // the child records its StartedBy, unverified, as the rollout does
	}
	who := r.starter
	who.Roles = r.scope.Workspaces[ws]
	return workflow.WithValue(cctx, childSubjectKey{}, who)
}

// authorized refuses a child on a workspace the start's scope does not hold
// with the deployer role. A start that came through no kumo frontend (no
// verified scope) is unverified as a whole, as its children are.
func (r *rolloutRun) authorized(ws string, action string) error {
	if !r.starter.Verified {
		return nil
	}
	if !r.scope.Verified {
		return fmt.Errorf("%s may not %s %s/%s: the rollout's start carries no scope verified by kumo's frontend", r.starter.Name, action, r.in.Project, ws)
	}
	roles, ok := r.scope.Workspaces[ws]
	if !ok || !hasRole(roles, "deployer") {
		return fmt.Errorf("%s may not %s %s/%s: the frontend did not find role deployer there when the rollout started", r.starter.Name, action, r.in.Project, ws)
	}
	return nil
}

func hasRole(roles []string, role string) bool {
	return slices.Contains(roles, role) || slices.Contains(roles, "admin")
}

func (r *rolloutRun) ws(i, j int) *runspec.RolloutWorkspace { return &r.st.Waves[i].Workspaces[j] }

// applyOne applies workspace j of wave i as a child Apply run.
func (r *rolloutRun) applyOne(ctx workflow.Context, i, j int) {
	s := r.ws(i, j)
	ws := s.Workspace
	s.State = runspec.RolloutApplying
	r.details(ctx)
	defer r.details(ctx)
	if err := r.authorized(ws, "apply"); err != nil {
		s.State, s.Error = runspec.RolloutFailed, err.Error()
		return
	}
	var prior activities.PriorRelease
	if err := workflow.ExecuteActivity(step(ctx, "previous revision of "+ws), acts.LatestSucceeded,
		activities.LatestFinalInput{Project: r.in.Project, Workspace: ws}).Get(ctx, &prior); err != nil {
		s.State, s.Error = runspec.RolloutFailed, rootMessage(err)
		return
	}
	r.priors[ws], s.Prior = prior, prior.Revision
	wave := r.in.Plan.Waves[i].Name
	rin := runspec.RunInput{
		Project: r.in.Project, Workspace: ws, Stack: r.in.Stack,
		Source:      &runspec.GenerateInput{StackDir: r.in.Source.StackDir, Git: r.in.Source.Git, Project: r.in.Project, Workspace: ws, GeneratorTimeout: r.in.Source.GeneratorTimeout},
		Git:         r.in.Source.Git,
		Reason:      fmt.Sprintf("rollout %s, wave %s", r.in.Plan.Name, wave),
		Label:       engine.ReleaseLabel{SourceCommit: r.in.SourceCommit},
		Parallelism: r.in.Parallelism, AutoApprove: r.in.AutoApprove, ApprovalTimeout: r.in.ApprovalTimeout,
		Settings: r.in.Settings[ws], Wait: r.in.Wait, Timeout: r.in.Timeout, StartedBy: r.in.StartedBy,
	}
	cctx := r.childOptions(ctx, ws, "apply", fmt.Sprintf("apply %s/%s (rollout %s, wave %s)", r.in.Project, ws, r.in.Plan.Name, wave))
	out, err := r.child(cctx, s, runspec.ApplyWorkflow, rin)
	r.seq++
	r.outcomes = append(r.outcomes, rollout.Outcome{Workspace: ws, Prior: prior.Revision, Revision: out.Revision, Seq: r.seq})
	s.Revision = out.Revision
	if err != nil {
		s.State, s.Error = runspec.RolloutFailed, err.Error()
		return
	}
	s.State = runspec.RolloutSucceeded
}

// child runs a child workflow to its end, recording its IDs in s.
func (r *rolloutRun) child(ctx workflow.Context, s *runspec.RolloutWorkspace, workflowType string, in runspec.RunInput) (runspec.Result, error) {
	var out runspec.Result
	f := workflow.ExecuteChildWorkflow(ctx, workflowType, in)
	var exec workflow.Execution
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	if err := f.GetChildWorkflowExecution().Get(ctx, &exec); errors.As(err, &started) {
		return out, fmt.Errorf("another run holds %s", runspec.MutatingWorkflowID(r.in.Project, s.Workspace))
	} else if err != nil {
		return out, errors.New(rootMessage(err))
	}
	s.WorkflowID, s.RunID = exec.ID, exec.RunID
	err := f.Get(ctx, &out)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		_ = app.Details(&out)
	}
	if err != nil {
		return out, errors.New(rootMessage(err))
	}
	if out.Status != "" && out.Status != runspec.StatusSucceeded {
		return out, fmt.Errorf("the run ended %s", out.Status)
	}
	return out, nil
}

// failedIn lists the workspaces of wave i that failed or were unhealthy,
// each with why.
func (r *rolloutRun) failedIn(i int) []string {
	var out []string
	for _, s := range r.st.Waves[i].Workspaces {
		if s.State == runspec.RolloutFailed || s.State == runspec.RolloutUnhealthy {
			out = append(out, s.Workspace+": "+s.Error)
		}
	}
	return out
}

// bake reads the health of wave i's applied workspaces now and then until
// its bake time has passed (once when it is 0); a workspace found unhealthy
// once is unhealthy.
func (r *rolloutRun) bake(ctx workflow.Context, i int) {
	w := r.in.Plan.Waves[i]
	interval := max(bakeInterval, w.Bake/maxBakeChecks)
	end := workflow.Now(ctx).Add(w.Bake)
	for {
		r.checkHealth(ctx, i)
		left := end.Sub(workflow.Now(ctx))
		if left <= 0 || len(r.healthy(i)) == 0 {
			return
		}
		_ = workflow.Sleep(ctx, min(interval, left))
	}
}

func (r *rolloutRun) healthy(i int) []int {
	var out []int
	for j, s := range r.st.Waves[i].Workspaces {
		if s.State == runspec.RolloutSucceeded {
			out = append(out, j)
		}
	}
	return out
}

// checkHealth reads the status of every healthy workspace of wave i at once
// (StackStatus children, on each workspace's task queue).
func (r *rolloutRun) checkHealth(ctx workflow.Context, i int) {
	js := r.healthy(i)
	futures := make([]workflow.ChildWorkflowFuture, len(js))
	now := workflow.Now(ctx)
	for k, j := range js {
		ws := r.ws(i, j).Workspace
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:    runspec.StatusWorkflowID(r.in.Project, ws, now),
			StaticSummary: fmt.Sprintf("health of %s/%s (rollout %s)", r.in.Project, ws, r.in.Plan.Name),
		})
		futures[k] = workflow.ExecuteChildWorkflow(cctx, runspec.StatusWorkflow, runspec.StatusInput{Project: r.in.Project, Workspace: ws, Settings: r.in.Settings[ws]})
	}
	for k, j := range js {
		s := r.ws(i, j)
		var st runspec.StackStatus
		if err := futures[k].Get(ctx, &st); err != nil {
			s.State, s.Error = runspec.RolloutUnhealthy, "status: "+rootMessage(err)
			continue
		}
		if !rollout.Healthy(st.Health.Status) {
			s.State, s.Error = runspec.RolloutUnhealthy, fmt.Sprintf("revision %d is %s%s", st.Revision, st.Health.Status, unhealthyPart(st))
		}
	}
	r.details(ctx)
}

// unhealthyPart names the first resource that is not healthy.
func unhealthyPart(st runspec.StackStatus) string {
	for _, n := range st.Resources {
		if !rollout.Healthy(n.Health.Status) {
			return fmt.Sprintf(": %s %s", n.ID, n.Health)
		}
	}
	return ""
}

// undo rolls back, newest first, every workspace the rollout changed.
func (r *rolloutRun) undo(ctx workflow.Context) {
	r.st.State = runspec.RolloutUndoing
	r.details(ctx)
	undo, kept := rollout.UndoPlan(r.outcomes)
	find := func(ws string) *runspec.RolloutWorkspace {
		for i := range r.st.Waves {
			for j := range r.st.Waves[i].Workspaces {
				if r.st.Waves[i].Workspaces[j].Workspace == ws {
					return &r.st.Waves[i].Workspaces[j]
				}
			}
		}
		return nil
	}
	for _, k := range kept {
		if s := find(k.Workspace); s != nil {
			s.State, s.Error = runspec.RolloutKept, joinMsg(s.Error, "not rolled back: "+k.Reason)
		}
	}
	for _, u := range undo {
		s := find(u.Workspace)
		if s == nil {
			continue
		}
		prior := r.priors[u.Workspace]
		s.State = runspec.RolloutRollingBack
		r.details(ctx)
		if err := r.authorized(u.Workspace, "rollback"); err != nil {
			s.State, s.Error = runspec.RolloutUndoFailed, joinMsg(s.Error, err.Error())
			continue
		}
		rin := runspec.RunInput{
			Project: r.in.Project, Workspace: u.Workspace, Stack: prior.Stack, SpecHash: prior.SpecHash, RollbackOf: u.To, Chart: prior.Chart,
			Reason:      fmt.Sprintf("undo of rollout %s: back to revision %d", r.in.Plan.Name, u.To),
			Parallelism: r.in.Parallelism, AutoApprove: true, ApprovalTimeout: r.in.ApprovalTimeout,
			Settings: r.in.Settings[u.Workspace], Wait: r.in.Wait, Timeout: r.in.Timeout, StartedBy: r.in.StartedBy,
		}
		cctx := r.childOptions(ctx, u.Workspace, "rollback", fmt.Sprintf("rollback %s/%s to revision %d (undo of rollout %s)", r.in.Project, u.Workspace, u.To, r.in.Plan.Name))
		out, err := r.child(cctx, s, runspec.RollbackWorkflow, rin)
		s.UndoRevision = out.Revision
		if err != nil {
			s.State, s.Error = runspec.RolloutUndoFailed, joinMsg(s.Error, "rollback: "+err.Error())
			continue
		}
		s.State = runspec.RolloutRolledBack
	}
}

func joinMsg(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// finish sets the rollout's end state; a failed or aborted rollout fails
// its workflow, with the status as the error's details.
func (r *rolloutRun) finish(ctx workflow.Context, failure string) (runspec.RolloutStatus, error) {
	r.ended = true
	status := runspec.StatusSucceeded
	switch {
	case r.aborted:
		r.st.State, status = runspec.RolloutAborted, runspec.StatusCancelled
		r.st.Message = joinMsg("aborted", failure)
	case failure != "":
		r.st.State, status = runspec.RolloutFailed, runspec.StatusFailed
		r.st.Message = failure
	default:
		r.st.State = runspec.RolloutSucceeded
	}
	r.details(ctx)
	if err := workflow.UpsertTypedSearchAttributes(ctx, StatusAttr.ValueSet(string(status))); err != nil {
		workflow.GetLogger(ctx).Warn("status attribute not set", "error", err)
	}
	if r.st.State == runspec.RolloutSucceeded {
		return r.st, nil
	}
	return r.st, temporal.NewApplicationErrorWithOptions(fmt.Sprintf("rollout %s %s: %s", r.in.Plan.Name, r.st.State, r.st.Message),
		"Rollout"+strings.ToUpper(string(r.st.State[:1]))+string(r.st.State[1:]), temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{r.st}})
}

// covers refuses who acting on workspaces unless the update's scope (as the
// frontend verified it) holds role on each. A rollout started through no
// kumo frontend takes unverified controls, as runs take unverified cancels.
func (r *rolloutRun) covers(ctx workflow.Context, who runspec.Subject, what string, workspaces []string, role string) error {
	if !r.starter.Verified && role != "approver" {
		return nil
	}
	scope := scopeIn(interceptor.WorkflowHeader(ctx))
	if !who.Verified || !scope.Verified {
		return fmt.Errorf("%s may not %s rollout %s/%s: the request was not authenticated by kumo's frontend", who.Name, what, r.in.Project, r.in.Plan.Name)
	}
	for _, ws := range workspaces {
		if !hasRole(scope.Workspaces[ws], role) {
			return fmt.Errorf("%s may not %s rollout %s/%s: that needs role %s on %s/%s, which the request did not establish", who.Name, what, r.in.Project, r.in.Plan.Name, role, r.in.Project, ws)
		}
	}
	return nil
}

func (r *rolloutRun) validateControl(ctx workflow.Context, who runspec.Subject, req runspec.RolloutControl) error {
	if r.ended || r.st.State == runspec.RolloutUndoing {
		return fmt.Errorf("rollout %s is %s: nothing to %s", r.in.Plan.Name, r.st.State, req.Action)
	}
	switch req.Action {
	case runspec.RolloutPause:
		if r.paused {
			return fmt.Errorf("rollout %s is already paused", r.in.Plan.Name)
		}
	case runspec.RolloutResume:
		if !r.paused {
			return fmt.Errorf("rollout %s is not paused", r.in.Plan.Name)
		}
	case runspec.RolloutAbort:
		if r.aborted {
			return fmt.Errorf("rollout %s is already aborting", r.in.Plan.Name)
		}
	default:
		return fmt.Errorf("unknown rollout action %q (want pause, resume or abort)", req.Action)
	}
	return r.covers(ctx, who, req.Action, r.in.Plan.Workspaces(), "deployer")
}

func (r *rolloutRun) control(ctx workflow.Context, who runspec.Subject, req runspec.RolloutControl) {
	switch req.Action {
	case runspec.RolloutPause:
		r.paused = true
		r.st.State = runspec.RolloutPaused
	case runspec.RolloutResume:
		r.paused = false
		r.st.State = runspec.RolloutRunning
	case runspec.RolloutAbort:
		r.aborted = true
	}
	r.st.Actions = append(r.st.Actions, runspec.RolloutAction{Action: req.Action, By: who.Actor(workflow.Now(ctx), req.Reason)})
	r.details(ctx)
}

func (r *rolloutRun) validateApprove(ctx workflow.Context, who runspec.Subject, req runspec.RolloutControl) error {
	if r.waiting < 0 {
		return fmt.Errorf("rollout %s has no wave awaiting approval (it is %s)", r.in.Plan.Name, r.st.State)
	}
	w := r.in.Plan.Waves[r.waiting]
	if req.Wave != "" && req.Wave != w.Name {
		return fmt.Errorf("wave %s is not the one awaiting approval: wave %s is", req.Wave, w.Name)
	}
	return r.covers(ctx, who, "approve wave "+w.Name+" of", w.Workspaces, "approver")
}

// details keeps the Web UI's current details: the waves, each workspace's
// state and revision.
func (r *rolloutRun) details(ctx workflow.Context) {
	workflow.SetCurrentDetails(ctx, RolloutTable(r.st))
}

// RolloutTable renders a rollout's status as a markdown table (the Web UI's
// current details; kumo rollout status prints the same rows).
func RolloutTable(st runspec.RolloutStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Rollout **%s** of %s (stack %s): **%s**", st.Name, st.Project, st.Stack, st.State)
	if st.Message != "" {
		fmt.Fprintf(&b, " — %s", st.Message)
	}
	b.WriteString("\n\n| wave | state | workspace | state | prior | revision | note |\n|---|---|---|---|---|---|---|\n")
	for _, w := range st.Waves {
		for k, s := range w.Workspaces {
			name, state := "", ""
			if k == 0 {
				name, state = w.Name, string(w.State)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", name, state, s.Workspace, s.State, revText(s.Prior), revText(s.Revision), strings.ReplaceAll(s.Error, "|", "/"))
		}
	}
	return b.String()
}

func revText(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}
