package release

import (
	"context"
	"errors"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// PreviewBatch previews nodes of one run as Preview does each, with the same
// changes, but reads the live objects of the resources it can in one go
// (runtime.LiveReader: one list per kind and namespace) and asks the runtime
// for a dry-run only where that read cannot tell:
//   - an object that is not live is a Create;
//   - one that an apply would leave as it is (and that kumo recorded) is
//     UnChanged, with no call of its own;
//   - any other (an update, an adoption), a resource with references, one
//     of a runtime that cannot read this way, or one the read failed for is
//     previewed alone (Preview).
//
// errs[i] is node i's failure that retrying cannot fix (the user sees every
// rejected resource at once); any other failure is the call's error.
// snapshot names the run's view of the infrastructure, shared by its batches
// (runtime.ReadLiveOptions). refresh are the state entries of unchanged resources whose live state
// differs from the prior state's, as Preview returns them, for the release.
func (m *Manager) PreviewBatch(ctx context.Context, nodes []Node, snapshot string) (changes []engine.Change, errs []error, refresh []backend.StateEntry, _ error) {
	changes, errs = make([]engine.Change, len(nodes)), make([]error, len(nodes))
	alone := make([]bool, len(nodes))
	// The nodes read together, by runtime (their settings are the run's).
	var listed []int
	var desired []*engine.Resource
	var reader runtime.LiveReader
	for i, in := range nodes {
		alone[i] = true
		if in.Delete {
			continue
		}
		spec, err := m.spec(ctx, in.SpecHash)
		if err != nil {
			return nil, nil, nil, err
		}
		res := spec.resource(in.ID)
		if res == nil || res.Type != engine.Kubernetes {
			continue
		}
		if refs, err := spec.refsOf(in.ID); err != nil || len(refs) > 0 {
			continue
		}
		if reader == nil {
			rt, err := m.runtime(res.Type, in.Settings)
			if err != nil {
				continue
			}
			if reader, _ = rt.(runtime.LiveReader); reader == nil {
				continue
			}
		}
		alone[i] = false
		listed = append(listed, i)
		desired = append(desired, res)
	}
	var lives []runtime.Live
	if len(listed) > 0 {
		lives = reader.ReadLive(ctx, desired, runtime.ReadLiveOptions{Snapshot: snapshot})
	}
	for k, i := range listed {
		in, l := nodes[i], lives[k]
		prior, err := m.priorResource(ctx, in)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case l.Err != nil, l.Resource != nil && (!l.Unchanged || prior == nil):
			alone[i] = true
		case l.Resource == nil:
			changes[i] = engine.Diff(in.ID, engine.Kubernetes, desired[k], nil, prior)
		default:
			live := l.Resource
			live.DependsOn = desired[k].DependsOn // no references: recordedDeps
			changes[i] = engine.Diff(in.ID, engine.Kubernetes, live, live, prior)
			if in.Key.Revision != 0 && !sameRecord(live, prior) {
				refresh = append(refresh, backend.StateEntry{ID: in.ID, Resource: live})
			}
			truncateValues(&changes[i])
		}
	}
	for i, in := range nodes {
		if !alone[i] {
			continue
		}
		c, r, err := m.Preview(ctx, in)
		switch {
		case err == nil:
			changes[i] = c
			if r != nil {
				refresh = append(refresh, *r)
			}
		case permanent(err):
			errs[i] = err
		default:
			return nil, nil, nil, err
		}
	}
	return changes, errs, refresh, nil
}

// permanent reports whether err is a node's failure that retrying cannot fix.
func permanent(err error) bool {
	return errors.Is(err, ErrResourceFailed) || errors.Is(err, ErrInvalid)
}
