package terraform

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// plan runs terraform plan and reads the plan back as JSON: the change's
// "before" is the object as the plan's refresh found it (live), its "after" what
// an apply would make of it (planned), with the values known only after the apply
// marked engine.KnownAfterApply.
func (s *session) plan(ctx context.Context) (live, planned *engine.Resource, err error) {
	path := filepath.Join(s.dir, planFile)
	if err := s.run(ctx, "plan", func(ctx context.Context) error {
		_, err := s.tf.Plan(ctx, tfexec.Out(path))
		return err
	}); err != nil {
		return nil, nil, err
	}
	var p *tfjson.Plan
	if err := s.run(ctx, "show", func(ctx context.Context) (err error) {
		p, err = s.tf.ShowPlanFile(ctx, path, tfexec.JSONNumber(true))
		return err
	}); err != nil {
		return nil, nil, err
	}
	var change *tfjson.Change
	for _, rc := range p.ResourceChanges {
		if rc.Address == s.address() && rc.Change != nil {
			change = rc.Change
		}
	}
	if change == nil {
		return nil, nil, runtime.Permanent(fmt.Errorf("%s %s: terraform plan has no change for %s", s.op, s.res.ID, s.address()))
	}
	state, err := os.ReadFile(filepath.Join(s.dir, stateFile))
	if err != nil && !os.IsNotExist(err) {
		return nil, nil, fmt.Errorf("%s %s: %w", s.op, s.res.ID, err)
	}
	if before, ok := engine.Normalize(change.Before).(map[string]any); ok {
		live = s.resource(before, string(state))
	}
	after, _ := engine.Normalize(withUnknowns(change.After, change.AfterUnknown)).(map[string]any)
	if after == nil {
		return live, nil, nil // planned for deletion
	}
	planned = &engine.Resource{ID: s.res.ID, Type: s.res.Type, Attributes: after, DependsOn: s.res.DependsOn, Extensions: s.res.Extensions}
	return live, planned, nil
}

// withUnknowns replaces in after every value that unknown (the plan's
// after_unknown: the same shape, true where a value is unknown) marks.
func withUnknowns(after, unknown any) any {
	switch u := unknown.(type) {
	case bool:
		if u {
			return engine.KnownAfterApply
		}
	case map[string]any:
		a, _ := after.(map[string]any)
		out := make(map[string]any, len(a)+len(u))
		for k, v := range a {
			out[k] = v
		}
		for k, uv := range u {
			out[k] = withUnknowns(a[k], uv)
		}
		return out
	case []any:
		a, _ := after.([]any)
		out := make([]any, max(len(a), len(u)))
		copy(out, a)
		for i, uv := range u {
			out[i] = withUnknowns(out[i], uv)
		}
		return out
	}
	return after
}
