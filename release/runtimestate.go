package release

import (
	"context"

	"github.com/kumoproj/kumo/engine"
)

// withRecordedState returns res carrying the state its runtime keeps in kumo's
// record (a Terraform resource's terraform state, engine.ExtTerraformState): from
// this release's entry for it when an earlier step or attempt recorded one, else
// from the prior release. The runtime continues from that state, on whatever
// worker it runs. Kubernetes resources keep no such state and come back as they
// are; a state a spec carries is never trusted.
func (m *Manager) withRecordedState(ctx context.Context, in Node, res *engine.Resource) (*engine.Resource, error) {
	if res.Type != engine.Terraform {
		return res, nil
	}
	rec, err := m.recorded(ctx, in, res.ID)
	if err != nil {
		return nil, err
	}
	out := *res
	out.Extensions = make(map[string]any, len(res.Extensions)+1)
	for k, v := range res.Extensions {
		if k != engine.ExtTerraformState {
			out.Extensions[k] = v
		}
	}
	if st := terraformState(rec); st != "" {
		out.Extensions[engine.ExtTerraformState] = st
	}
	return &out, nil
}

// recorded returns resource id as this release has it so far: its state entry,
// or, when it has none, the prior release's state it starts from. nil when the
// resource was deleted or never recorded.
func (m *Manager) recorded(ctx context.Context, in Node, id string) (*engine.Resource, error) {
	if in.Key.Revision != 0 {
		e, ok, err := m.backend.GetStateEntry(ctx, in.Key, id)
		if err != nil {
			return nil, err
		}
		if ok {
			return e.Resource, nil
		}
	}
	p, err := m.prior(ctx, in.Key.Project, in.Key.Workspace, in.PriorRevision)
	return p.resource(id), err
}

// terraformState is the terraform state res carries, "" when none.
func terraformState(res *engine.Resource) string {
	if res == nil {
		return ""
	}
	s, _ := res.Extensions[engine.ExtTerraformState].(string)
	return s
}

// restoreTarget is what undoing an update or a delete applies. For Kubernetes it
// is the prior state's object (the runtime drops the fields the server set). A
// recorded Terraform resource holds computed attributes that are not arguments
// (a terraform apply refuses them), so for Terraform it is the prior release's
// spec resource, its references resolved from the prior release's state.
func (m *Manager) restoreTarget(ctx context.Context, in Node, prior *engine.Resource) (*engine.Resource, error) {
	if prior.Type != engine.Terraform {
		return prior, nil
	}
	rel, err := m.priorRelease(ctx, in.Key.Project, in.Key.Workspace, in.PriorRevision)
	if err != nil {
		return nil, err
	}
	if rel == nil || rel.SpecHash == "" {
		return nil, kindf(ErrResourceFailed, "cannot restore %s: the prior release has no spec", in.ID)
	}
	spec, err := m.spec(ctx, rel.SpecHash)
	if err != nil {
		return nil, err
	}
	res := spec.resource(in.ID)
	if res == nil {
		return nil, kindf(ErrResourceFailed, "cannot restore %s: it is not in the prior release's spec", in.ID)
	}
	refs, err := spec.refsOf(in.ID)
	if err != nil {
		return nil, err
	}
	desired, _, err := withRefs(ctx, res, refs, func(_ context.Context, id string) (map[string]any, error) {
		if r := findResource(rel.State.Resources, id); r != nil {
			return r.Attributes, nil
		}
		return nil, nil
	}, false)
	return desired, err
}
