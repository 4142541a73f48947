package terraform

import (
	"context"
	"fmt"
	"maps"
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
//
// Two plans need no JSON, which saves a terraform show (a process that starts
// the provider again) per resource:
//   - no change at all (terraform plan's exit code 0): the output of the whole
//     resource would change with any attribute of the refreshed object, so the
//     recorded state's output is what is live and what is planned;
//   - a resource with no recorded object: it is created (engine.Diff lists no
//     fields for a Create), planned as its arguments.
func (s *session) plan(ctx context.Context) (live, planned *engine.Resource, err error) {
	path := filepath.Join(s.dir, planFile)
	var changed bool
	if err := s.run(ctx, "plan", func(ctx context.Context) (err error) {
		changed, err = s.tf.Plan(ctx, tfexec.Out(path))
		return err
	}); err != nil {
		return nil, nil, err
	}
	if err := s.loadSensitive(ctx); err != nil {
		return nil, nil, err
	}
	state, err := os.ReadFile(filepath.Join(s.dir, stateFile))
	if err != nil && !os.IsNotExist(err) {
		return nil, nil, fmt.Errorf("%s %s: %w", s.op, s.res.ID, err)
	}
	var st *tfstate
	if len(state) > 0 {
		if st, err = parseState(state); err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", s.op, s.res.ID, err)
		}
	}
	switch {
	case !changed && st != nil && st.holds(s.spec) && st.output() != nil:
		live = s.resource(st.output(), string(state))
		return live, live, nil
	case st == nil || !st.holds(s.spec):
		return nil, s.res, nil
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
	if before, ok := engine.Normalize(change.Before).(map[string]any); ok {
		live = s.resource(before, string(state))
	}
	after, _ := engine.Normalize(withUnknowns(change.After, change.AfterUnknown)).(map[string]any)
	if after == nil {
		return live, nil, nil // planned for deletion
	}
	ext := maps.Clone(s.res.Extensions)
	if ext == nil {
		ext = map[string]any{}
	}
	s.markSensitive(ext)
	planned = &engine.Resource{ID: s.res.ID, Type: s.res.Type, Attributes: after, DependsOn: s.res.DependsOn, Extensions: ext}
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
