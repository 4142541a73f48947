package release

import (
	"context"
	"fmt"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// planSurgery is what surgery does to the release of revision prior of
// project+workspace: the spec and records of the new revision, and the
// changes its run shows. Final releases never change, so it is the same
// plan however often it is made.
func (m *Manager) planSurgery(ctx context.Context, project, workspace string, prior int, surgery engine.Surgery) (*engine.SurgeryPlan, error) {
	verb := "forget"
	if surgery.Move != nil {
		verb = "mv"
	}
	if prior == 0 {
		return nil, kindf(ErrNoRelease, "nothing to %s: %s/%s has no releases", verb, project, workspace)
	}
	rel, err := m.priorRelease(ctx, project, workspace, prior)
	if err != nil {
		return nil, err
	}
	spec, err := m.spec(ctx, rel.SpecHash)
	if err != nil {
		return nil, err
	}
	state := rel.State
	if state == nil {
		state = &engine.State{}
	}
	plan, err := engine.PlanSurgery(surgery, spec.Spec, state, fmt.Sprintf("revision %d of %s/%s", prior, project, workspace))
	if err != nil {
		return nil, kindErr(ErrInvalid, err)
	}
	return plan, nil
}

// beginSurgery checks a forget or move against the release it starts from
// and stores the spec the new revision records (the prior spec without the
// forgotten resources, or with the moved one renamed and references to it
// following).
func (m *Manager) beginSurgery(ctx context.Context, in BeginInput, prior int) (specHash string, changes []engine.Change, _ error) {
	if in.Surgery == nil || in.Surgery.Operation() != in.Operation {
		return "", nil, kindf(ErrInvalid, "a %s release needs the resources to %s", in.Operation, in.Operation)
	}
	plan, err := m.planSurgery(ctx, in.Project, in.Workspace, prior, *in.Surgery)
	if err != nil {
		return "", nil, err
	}
	h, err := m.backend.PutSpec(ctx, plan.Spec)
	if err != nil {
		return "", nil, err
	}
	return h, plan.Changes, nil
}

// RecordSurgery writes the records of a forget or move release: the
// resources it forgets dropped, the moved one under its new ID, and the
// dependencies that named them. It touches nothing live. Called twice, it
// records the same.
func (m *Manager) RecordSurgery(ctx context.Context, key backend.ReleaseKey) (int, error) {
	r, err := m.backend.GetRelease(ctx, key.Project, key.Workspace, key.Revision)
	if err != nil {
		return 0, err
	}
	if r.Surgery == nil {
		return 0, kindf(ErrInvalid, "revision %d of %s/%s is a %s, not a forget or move", r.Revision, r.Project, r.Workspace, r.Operation)
	}
	if r.Phase.Final() {
		return 0, kindf(ErrFinal, "revision %d is already %s", r.Revision, r.Phase)
	}
	plan, err := m.planSurgery(ctx, key.Project, key.Workspace, key.Revision-1, *r.Surgery)
	if err != nil {
		return 0, err
	}
	entries := make([]backend.StateEntry, len(plan.Records))
	for i, rec := range plan.Records {
		entries[i] = backend.StateEntry{ID: rec.ID, Resource: rec.Resource, Deleted: rec.Resource == nil}
	}
	if err := m.RecordBatch(ctx, key, entries); err != nil {
		return 0, fmt.Errorf("record the %s of revision %d: %w", r.Operation, r.Revision, err)
	}
	return len(entries), nil
}
