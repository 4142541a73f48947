package release

import (
	"context"
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/planpolicy"
	"github.com/kumoproj/kumo/engine/runtime"
)

// SetPolicies sets the operator's server-wide plan policies (`--plan-policies
// FILE`), evaluated before every workspace's own.
func (m *Manager) SetPolicies(s *planpolicy.Set) { m.policies = s }

// PolicyChange is one change of a run's plan to check: its node and what the
// preview found. Recorded: the rules see the object as kumo recorded it
// instead of reading it live (a workspace whose runtime steps run on its own
// task queue, whose cluster this worker may not reach).
type PolicyChange struct {
	Node
	Type   engine.Type
	Action engine.Action
	Paths  []string
}

// Policies are the rules a workspace's plans pass: the operator's, then the
// workspace's as stored in the backend (its administrators wrote them; a run
// cannot add or drop any). A stored rule that no longer compiles fails the run
// rather than let it through unchecked.
func (m *Manager) Policies(ctx context.Context, workspace string) (*planpolicy.Set, error) {
	ws, err := m.backend.GetWorkspace(ctx, workspace)
	if errors.Is(err, backend.ErrNotFound) {
		return planpolicy.Join(m.policies), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the policies of workspace %s: %w", workspace, err)
	}
	own, err := planpolicy.Compile(ws.Policies, "workspace "+workspace)
	if err != nil {
		return nil, kindErr(ErrInvalid, err)
	}
	return planpolicy.Join(m.policies, own), nil
}

// CheckPolicies evaluates the workspace's policies over a plan's changes (the
// unchanged resources are not among them): each sees its resource as the spec
// has it and as it is live now. Live objects are read only when a rule
// exists, with the run's preview snapshot (runtime.ReadLiveOptions) where the
// runtime reads in lists, one by one otherwise; a create has none. In a
// workspace whose runtime steps run on their own task queue, "live" is the
// object as kumo last recorded it: the check runs with the run's
// orchestration, whose worker holds the operator's policies but may not reach
// that cluster.
func (m *Manager) CheckPolicies(ctx context.Context, workspace string, changes []PolicyChange, snapshot string) (planpolicy.Results, error) {
	set, err := m.Policies(ctx, workspace)
	if err != nil || set.Len() == 0 || len(changes) == 0 {
		return planpolicy.Results{}, err
	}
	ctx = oneStep(ctx)
	spec, err := m.spec(ctx, changes[0].SpecHash)
	if err != nil {
		return planpolicy.Results{}, err
	}
	var reads []Node
	var readAt []int
	lives := make([]*engine.Resource, len(changes))
	for i, c := range changes {
		if c.Settings.TaskQueue != "" && c.Action != engine.Create {
			if lives[i], err = m.priorResource(ctx, c.Node); err != nil {
				return planpolicy.Results{}, err
			}
			continue
		}
		if c.Action != engine.Create {
			reads, readAt = append(reads, c.Node), append(readAt, i)
		}
	}
	listed, _, listedLives, err := m.readListed(ctx, reads, runtime.ReadLiveOptions{Snapshot: snapshot})
	if err != nil {
		return planpolicy.Results{}, err
	}
	done := make([]bool, len(reads))
	for k, j := range listed {
		if l := listedLives[k]; l.Err == nil {
			lives[readAt[j]], done[j] = l.Resource, true
		}
	}
	for j, in := range reads {
		if done[j] {
			continue
		}
		if lives[readAt[j]], err = m.readOne(ctx, spec, in); err != nil {
			return planpolicy.Results{}, err
		}
	}
	resources := make([]planpolicy.Resource, len(changes))
	for i, c := range changes {
		var paths []engine.FieldChange
		for _, p := range c.Paths {
			paths = append(paths, engine.FieldChange{Path: p})
		}
		var desired *engine.Resource
		if !c.Delete {
			desired = spec.resource(c.ID)
		}
		resources[i] = engine.PolicyResource(engine.Change{ID: c.ID, Type: c.Type, Action: c.Action, Fields: paths}, desired, lives[i])
	}
	return set.Evaluate(resources), nil
}

// readOne reads one node's resource live (nil: not there), as Preview reads
// it: from the spec, or the prior state for one to delete, with what kumo
// recorded of it.
func (m *Manager) readOne(ctx context.Context, spec *specIndex, in Node) (*engine.Resource, error) {
	target := spec.resource(in.ID)
	if target == nil || in.Delete {
		prior, err := m.priorResource(ctx, in)
		if err != nil {
			return nil, err
		}
		target = prior
	}
	return m.readNode(ctx, in, target)
}

// readNode reads target, the resource of node in, live (nil: not there),
// with what kumo recorded of it.
func (m *Manager) readNode(ctx context.Context, in Node, target *engine.Resource) (*engine.Resource, error) {
	if target == nil {
		return nil, kindf(ErrInvalid, "resource %s is neither in the spec nor in the prior state", in.ID)
	}
	rt, err := m.runtime(ctx, in.Key.Workspace, target.Type, in.Settings)
	if err != nil {
		return nil, err
	}
	if target, err = m.withRecordedState(ctx, in, target); err != nil {
		return nil, err
	}
	live, err := rt.Read(ctx, target)
	if errors.Is(err, runtime.ErrNotFound) {
		return nil, nil
	}
	return live, nodeError(err)
}
