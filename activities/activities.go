package activities

import (
	"context"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// Activities carries what every activity needs. Register a *Activities with a
// worker through Register, under the names in names.go.
type Activities struct {
	m *release.Manager
}

// New returns the activities over a backend, the runtimes and a run checker.
func New(b backend.Backend, r release.Runtimes, runs release.RunChecker) *Activities {
	return &Activities{m: release.New(b, r, runs)}
}

// SetGeneration sets the worker operator's policy for generating: where
// stacks may be read from, which directories' generators are trusted
// (release.Manager.SetGeneration). A function, not a method: every method
// of Activities is an activity to a worker that registers the struct.
func SetGeneration(a *Activities, p generate.Policy) { a.m.SetGeneration(p) }

// Generate builds and stores the Spec of a stack (release.Manager.Generate),
// heartbeating while external generators run.
func (a *Activities) Generate(ctx context.Context, in runspec.GenerateInput) (runspec.GenerateResult, error) {
	defer heartbeat(ctx)()
	res, err := a.m.Generate(ctx, runID(ctx), in)
	return res, temporalError(err)
}

// PlanGraph validates the spec and returns the nodes a run walks.
func (a *Activities) PlanGraph(ctx context.Context, in PlanInput) (Plan, error) {
	p, err := a.m.PlanGraph(ctx, release.PlanInput(in))
	if err != nil {
		return Plan{}, temporalError(err)
	}
	out := Plan{Nodes: make([]PlanNode, len(p.Nodes))}
	for i, n := range p.Nodes {
		out.Nodes[i] = PlanNode(n)
	}
	return out, nil
}

// planPageBytes bounds one page of a plan, well under Temporal's 2 MB
// payload limit.
const planPageBytes = 1 << 20

// PlanPage returns the nodes of a plan from in.Offset on, as many as fit in
// one payload (release.Manager.PlanPage): a run takes a plan of any size page
// by page.
func (a *Activities) PlanPage(ctx context.Context, in PlanPageInput) (PlanPage, error) {
	defer heartbeat(ctx)()
	nodes, total, err := a.m.PlanPage(ctx, release.PlanInput(in.PlanInput), in.Offset, planPageBytes)
	if err != nil {
		return PlanPage{}, temporalError(err)
	}
	out := PlanPage{Nodes: make([]PlanNode, len(nodes)), Total: total}
	for i, n := range nodes {
		out.Nodes[i] = PlanNode(n)
	}
	if in.Offset == 0 {
		if out.Hooks, err = a.m.PlanHooks(ctx, release.PlanInput(in.PlanInput)); err != nil {
			return PlanPage{}, temporalError(err)
		}
	}
	return out, nil
}

// CreateRelease makes revision latest+1 for this run, or returns the one this run
// already made (release.Manager.Begin).
func (a *Activities) CreateRelease(ctx context.Context, in CreateReleaseInput) (ReleaseInfo, error) {
	info, err := a.m.Begin(ctx, release.BeginInput(in))
	return ReleaseInfo(info), temporalError(err)
}

// RecordSurgery writes the records of a forget or move release (what it
// forgets dropped, what it moves under its new ID); nothing live changes. It
// returns how many records it wrote.
func (a *Activities) RecordSurgery(ctx context.Context, in SurgeryInput) (int, error) {
	n, err := a.m.RecordSurgery(ctx, in.Key)
	return n, temporalError(err)
}

// SetReleasePhase records that a release moved on (e.g. previewing -> applying),
// with who approved it, and appends what they did to the audit log.
func (a *Activities) SetReleasePhase(ctx context.Context, in SetPhaseInput) error {
	if in.Preview != nil {
		if err := a.m.RecordPreview(ctx, in.Key, *in.Preview); err != nil {
			return temporalError(err)
		}
	}
	if err := a.m.SetPhase(ctx, in.Key, in.Phase, in.People); err != nil {
		return temporalError(err)
	}
	return temporalError(a.m.Audit(ctx, in.Audit))
}

// RecordedPreview returns the previews SetReleasePhase kept for the release.
func (a *Activities) RecordedPreview(ctx context.Context, in RecordedPreviewInput) (backend.RecordedPreview, error) {
	p, err := a.m.RecordedPreview(ctx, in.Key)
	return p, temporalError(err)
}

// FinishRelease folds the run's per-resource state entries into the release and
// marks it succeeded or failed. Running it again after it finished changes nothing.
func (a *Activities) FinishRelease(ctx context.Context, in FinishInput) (FinishResult, error) {
	defer heartbeat(ctx)()
	if err := a.m.Audit(ctx, in.Audit); err != nil {
		return FinishResult{}, temporalError(err)
	}
	n, err := a.m.Finish(ctx, release.FinishInput{Key: in.Key, Phase: in.Phase, Error: in.Error, Compensation: in.Compensation, People: in.People, Hooks: in.Hooks})
	return FinishResult{Resources: n}, temporalError(err)
}

// LatestFinalRevision returns the newest finished revision (0: none).
func (a *Activities) LatestFinalRevision(ctx context.Context, in LatestFinalInput) (int, error) {
	rev, err := a.m.LatestFinal(ctx, in.Project, in.Workspace)
	return rev, temporalError(err)
}

// PreviewResource returns the three-way diff of one resource and, in an apply,
// records the refreshed state of a resource that will not change: how runs
// started before PreviewNode previewed, kept for them.
func (a *Activities) PreviewResource(ctx context.Context, in NodeInput) (engine.Change, error) {
	c, err := a.m.PreviewAndRefresh(ctx, release.Node(in))
	if err != nil {
		return engine.Change{}, temporalError(err)
	}
	return c, nil
}

// ApplyResource applies one resource and records the result, heartbeating while
// the runtime works (a terraform apply may take many minutes). The result says
// whether the node still waits for the resource's health (WaitResource).
func (a *Activities) ApplyResource(ctx context.Context, in NodeInput) (ApplyResult, error) {
	if err := handOver(ctx); err != nil {
		return ApplyResult{}, err
	}
	defer heartbeat(ctx)()
	res, err := a.m.Apply(ctx, release.Node(in))
	return ApplyResult(res), temporalError(err)
}

// DeleteResource removes one recorded resource and waits until it is gone,
// heartbeating so a crashed worker's delete is retried within seconds.
func (a *Activities) DeleteResource(ctx context.Context, in NodeInput) error {
	if err := handOver(ctx); err != nil {
		return err
	}
	defer heartbeat(ctx)()
	return temporalError(a.m.Delete(ctx, release.Node(in)))
}

// CompensateResource undoes what a failed apply did to one resource.
func (a *Activities) CompensateResource(ctx context.Context, in CompensateInput) error {
	defer heartbeat(ctx)()
	return temporalError(a.m.Compensate(ctx, release.Node(in.NodeInput), in.Action))
}
