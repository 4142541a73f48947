package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// acts is only used for method references: activities run on workers, never here.
var acts *activities.Activities

// run is the state one workflow execution keeps and exposes through ProgressQuery.
type run struct {
	in runspec.RunInput
	// op is the run's operation (apply, destroy, rollback, preview), for its
	// summary line.
	op       string
	progress runspec.Progress
	// noPolicies: the run's release says no plan policies apply (from
	// planPoliciesWhenAny on, no check runs).
	noPolicies bool
	plan       activities.Plan
	// compensation is set once a failed apply has been undone.
	compensation *engine.Compensation
	control
	// waitFailed marks nodes applied whose wait for health then failed.
	waitFailed map[int]bool
	// applied (nil unless the plan has dependencies that need only be
	// applied, appliedEdgesChange) takes the index of each node applied that
	// goes on to wait for its health, so the walk starts its dependents that
	// need it only applied (batchWalk.applied).
	applied workflow.Channel
	gate    approvalGate
	// seq counts changes to the nodes' progress; nodeSeq[i] is the count
	// when node i last changed (ProgressPageQuery answers what changed).
	seq     uint64
	nodeSeq []uint64
	// outOfHistory: a walk stopped because the history neared its limit.
	outOfHistory bool
	// healthy lists the nodes that waited or wait for health (showHealth).
	healthy []int
	// counted caches changeCounts: the counts of the changes at of, n long.
	counted struct {
		of     *engine.Change
		n      int
		counts runspec.ChangeCounts
	}
	// deferRefresh: previews write nothing (previewRefreshChange); stale are
	// the nodes the latest preview found unchanged but recorded differently,
	// whose record refreshStale brings up to date once the run is approved.
	deferRefresh bool
	stale        []int
	// starter started the run; rules decide who may answer, once the
	// release gave the workspace's policy.
	starter runspec.Subject
	rules   runspec.ApprovalRules
	// policyApproval: require-approval policies raised rules (checkPolicies),
	// so even a run started with AutoApprove waits for the approvals its
	// starter's cannot give.
	policyApproval bool
	// audits are what the run's people did, for the audit log: each is sent
	// with the next release step (SetReleasePhase, FinishRelease), which
	// appends it once however often it is sent.
	audits []backend.AuditEntry
	// events are the run's announcements to its workspace's sinks.
	events runEvents
	// planHooks is how many hooks the plan's spec (or the prior release's)
	// has (activities.PlanPage.Hooks); hookRuns what the run's hooks did.
	planHooks int
	hookRuns  []engine.HookRun
	// release: how the release lifecycle's steps run (newReleaseSteps).
	release releaseSteps
	// readsIn is the history length as of the workflow task in which the
	// latest preview ended with local reads, 0 if none did (phaseSteps).
	readsIn int
	// releaseIn is the history length as of the workflow task that created
	// the release (phaseSteps). keptPreview is that release when the task is
	// another attempt of one that kept its previews
	// (ReleaseInfo.PreviewRecorded): the run's first preview reads them back.
	releaseIn   int
	keptPreview *backend.ReleaseKey
}

func newRun(ctx workflow.Context, in runspec.RunInput, op string) (*run, error) {
	if err := checkStack(ctx, in.Project, in.Workspace); err != nil {
		return nil, err
	}
	if in.Parallelism <= 0 {
		in.Parallelism = defaultParallel
	}
	r := &run{in: in, op: op, progress: runspec.Progress{Stage: runspec.StagePlanning, Target: in.Targeting()}}
	r.signals = signalsOf(ctx)
	r.starter = r.signals.starter(in.StartedBy)
	started := r.starter.Actor(workflow.GetInfo(ctx).WorkflowStartTime, "")
	r.people.StartedBy = &started
	r.progress.People = &r.people
	r.init(withRuntimeQueue(ctx, in.Settings.TaskQueue))
	if err := workflow.SetQueryHandler(ctx, runspec.ProgressQuery, func() (runspec.Progress, error) { return r.progress, nil }); err != nil {
		return nil, err
	}
	if err := workflow.SetQueryHandler(ctx, runspec.ProgressPageQuery, func(req runspec.ProgressRequest) (runspec.ProgressPage, error) { return r.progressPage(req), nil }); err != nil {
		return nil, err
	}
	return r, r.setApprovalHandler(ctx)
}

// planTimeout bounds making a plan: parsing and sorting a spec of 50,000
// resources takes seconds on a small machine. The step heartbeats, so a dead
// worker's is retried within a short call's timeout.
const planTimeout = 2 * time.Minute

func (r *run) planGraph(ctx workflow.Context, specHash string, prior int) error {
	// Targets and the protection override are data of the plan step's
	// input: a run without them asks for the same plan as before they
	// existed, so recorded histories replay unchanged.
	in := activities.PlanInput{Project: r.in.Project, Workspace: r.in.Workspace, SpecHash: specHash, PriorRevision: prior,
		Targets: joinTargets(r.in.Targets), TargetDependents: r.in.TargetDependents, AllowProtectedDelete: r.in.AllowProtectedDelete}
	if changeVersion(ctx, planPagesChange, planPagesVersion) == workflow.DefaultVersion {
		if err := workflow.ExecuteActivity(step(ctx, "plan"), acts.PlanGraph, in).Get(ctx, &r.plan); err != nil {
			return err
		}
	} else {
		o := shortOptions("plan")
		o.StartToCloseTimeout, o.HeartbeatTimeout = planTimeout, shortCallTimeout
		r.plan = activities.Plan{}
		// Only the first page may be a local step: a page is up to 1 MiB,
		// and a workflow task records its local steps' results in one write,
		// which the server bounds (4 MB); a plan of more pages takes the rest
		// as ordinary activities, one write each.
		steps := r.release
		for {
			var page activities.PlanPage
			err := steps.start(ctx, o, acts.PlanPage, activities.PlanPageInput{PlanInput: in, Offset: len(r.plan.Nodes)}).Get(ctx, &page)
			steps = releaseSteps{}
			if err != nil {
				return err
			}
			if r.plan.Nodes == nil {
				r.plan.Nodes = make([]activities.PlanNode, 0, page.Total)
				r.planHooks = page.Hooks
			}
			r.plan.Nodes = append(r.plan.Nodes, page.Nodes...)
			if len(page.Nodes) == 0 || len(r.plan.Nodes) >= page.Total {
				break
			}
		}
	}
	r.progress.Nodes = make([]runspec.Node, len(r.plan.Nodes))
	r.seq++
	r.nodeSeq = make([]uint64, len(r.plan.Nodes))
	for i, n := range r.plan.Nodes {
		r.nodeSeq[i] = r.seq
		r.progress.Nodes[i] = runspec.Node{ID: n.ID, Status: runspec.NodePending}
	}
	return nil
}

// preview diffs every node (they are independent reads, so no DAG order).
func (r *run) preview(ctx workflow.Context, node func(i int) activities.NodeInput) ([]engine.Change, error) {
	r.setStage(runspec.StagePreview, len(r.plan.Nodes))
	changes := make([]engine.Change, len(r.plan.Nodes))
	stale := make([]bool, len(r.plan.Nodes))
	var failures nodeErrors
	noDeps := make([][]int32, len(r.plan.Nodes))
	start := func(i int) workflow.Future {
		in := node(i)
		if r.deferRefresh {
			return executeRead(ctx, r.plan.Nodes[i].Type, "preview "+in.ID, acts.PreviewNode, in)
		}
		return executeRead(ctx, r.plan.Nodes[i].Type, "preview "+in.ID, acts.PreviewResource, in)
	}
	done := func(i int, f workflow.Future) error {
		var err error
		if r.deferRefresh {
			var p activities.NodePreview
			err = f.Get(ctx, &p)
			changes[i], stale[i] = p.Change, p.Refresh
		} else {
			err = f.Get(ctx, &changes[i])
		}
		failures.add(r.plan.Nodes[i].ID, err)
		r.stepDone()
		return nil // keep previewing: the user sees every rejected resource at once
	}
	if key := r.keptPreview; key != nil {
		// This task's earlier attempt kept its previews before it changed
		// anything; previewing again would see what it changed.
		r.keptPreview = nil
		var err error
		if changes, stale, err = r.readKeptPreview(ctx, *key); err != nil {
			return nil, err
		}
		r.done = len(r.plan.Nodes)
		r.showDetails()
	} else if changeVersion(ctx, batchPreviewChange, batchPreviewVersion) >= batchPreviewVersion {
		local := r.localPreviews(ctx)
		batchWalk{
			deps: noDeps, limit: r.in.Parallelism, maxBatch: maxPreviewBatch, stopped: r.isStopped,
			work: func(int) bool { return true },
			class: func(i int) string {
				if r.plan.Nodes[i].Type == engine.Kubernetes {
					return "preview"
				}
				return ""
			},
			start: func(nodes []int) []workflow.Future {
				if len(nodes) == 1 {
					return []workflow.Future{start(nodes[0])}
				}
				return r.startPreviewBatch(ctx, nodes, node, local)
			},
			done: done,
		}.run(ctx)
	} else {
		walk(ctx, noDeps, r.in.Parallelism, r.isStopped, start, done)
	}
	if err := r.checkStop(); err != nil {
		return nil, err
	}
	if err := failures.err("preview"); err != nil {
		return nil, err
	}
	if runtimeQueue(ctx) == "" { // its single reads are local, and so are its batches of a small plan
		r.readsIn = workflow.GetInfo(ctx).GetCurrentHistoryLength()
	}
	r.stale = nil
	for i, s := range stale {
		if s {
			r.stale = append(r.stale, i)
		}
	}
	r.markReferenceChanges(changes)
	r.recordChanges(changes)
	return changes, nil
}

// markReferenceChanges turns an unchanged node into an update when a resource it
// references is created or updated: its resolved values are only known after
// that apply, so it must be applied after it, not skipped. Nodes are in
// dependency order, so a chain of references is followed in one pass.
func (r *run) markReferenceChanges(changes []engine.Change) {
	for i, n := range r.plan.Nodes {
		if changes[i].Action != engine.UnChanged || n.Delete {
			continue
		}
		for _, j := range n.Refs {
			if a := changes[j].Action; a == engine.Create || a == engine.Update {
				changes[i].Action = engine.Update
				changes[i].Fields = append(changes[i].Fields, engine.FieldChange{
					Path: "(references " + changes[j].ID + ")", After: engine.KnownAfterApply,
				})
				break
			}
		}
	}
}

// nodeErrors collects per-resource failures into one error naming each resource.
type nodeErrors struct {
	n int
	// msgs are the distinct messages in the order first seen, ids[msg] the
	// resources that failed with each: a failure the resources share (the
	// kubeconfig does not load, the cluster cannot be reached) is said once.
	msgs []string
	ids  map[string][]string
}

func (e *nodeErrors) add(id string, err error) {
	if err == nil {
		return
	}
	msg := rootMessage(err)
	if e.ids == nil {
		e.ids = map[string][]string{}
	}
	if _, seen := e.ids[msg]; !seen {
		e.msgs = append(e.msgs, msg)
	}
	e.ids[msg] = append(e.ids[msg], id)
	e.n++
}

// maxNamed bounds the resources named for one shared message.
const maxNamed = 3

func (e *nodeErrors) err(what string) error {
	lines := make([]string, 0, len(e.msgs))
	for _, msg := range e.msgs {
		ids := e.ids[msg]
		switch {
		case len(ids) == 1 && strings.Contains(msg, ids[0]): // runtimes usually name the resource already
			lines = append(lines, msg)
		case len(ids) == 1:
			lines = append(lines, ids[0]+": "+msg)
		default:
			named := ids[:min(len(ids), maxNamed)]
			more := ""
			if len(ids) > maxNamed {
				more = fmt.Sprintf(" and %d more", len(ids)-maxNamed)
			}
			lines = append(lines, fmt.Sprintf("%s (%d resources: %s%s)", msg, len(ids), strings.Join(named, ", "), more))
		}
	}
	switch {
	case e.n == 0:
		return nil
	case e.n == 1:
		return fmt.Errorf("%s failed: %s", what, lines[0])
	}
	return fmt.Errorf("%s failed for %d resources:\n  %s", what, e.n, strings.Join(lines, "\n  "))
}
