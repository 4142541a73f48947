package release

import (
	"context"
	"errors"
	"slices"

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
//   - one the spec no longer has (to delete) is what the read found of it;
//   - one kumo recorded whose change the runtime computed for sure
//     (runtime.Live.Planned: an apply the apiserver stores as sent) is that
//     change, with no call of its own, when the apply would send the spec's
//     object as it is (no secret store reference, no ignore rule selects it);
//   - any other (an update, an adoption) is previewed alone (Preview) from
//     the object the read found: its dry-run, and no read of its own;
//   - a resource with references, one of a runtime that cannot read this
//     way, or one the read failed for is previewed alone, read alone.
//
// errs[i] is node i's failure that retrying cannot fix (the user sees every
// rejected resource at once); any other failure is the call's error.
// snapshot names the run's view of the infrastructure, shared by its batches
// (runtime.ReadLiveOptions). refresh[i] is Preview's refresh of node i: it is
// unchanged but its record is stale (Refresh it once the run is approved).
// PreviewBatch writes nothing.
func (m *Manager) PreviewBatch(ctx context.Context, nodes []Node, snapshot string) (changes []engine.Change, errs []error, refresh []bool, _ error) {
	changes, errs, entries, err := m.previewBatch(ctx, nodes, snapshot)
	if err != nil {
		return nil, nil, nil, err
	}
	refresh = make([]bool, len(nodes))
	for i, e := range entries {
		refresh[i] = e != nil
	}
	return changes, errs, refresh, nil
}

// PreviewBatchAndRefresh is PreviewBatch that records the refreshed state of
// unchanged resources at once, in one write: how runs started before refreshes
// were deferred to their approval previewed, kept for them.
func (m *Manager) PreviewBatchAndRefresh(ctx context.Context, nodes []Node, snapshot string) (changes []engine.Change, errs []error, _ error) {
	changes, errs, entries, err := m.previewBatch(ctx, nodes, snapshot)
	if err != nil {
		return nil, nil, err
	}
	var refresh []backend.StateEntry
	for _, e := range entries {
		if e != nil {
			refresh = append(refresh, *e)
		}
	}
	if len(nodes) > 0 && nodes[0].Key.Revision != 0 {
		if err := m.RecordBatch(ctx, nodes[0].Key, refresh); err != nil {
			return nil, nil, err
		}
	}
	return changes, errs, nil
}

// previewBatch is PreviewBatch returning, per node, the state entry a refresh
// would record (nil: none).
func (m *Manager) previewBatch(ctx context.Context, nodes []Node, snapshot string) (changes []engine.Change, errs []error, refresh []*backend.StateEntry, _ error) {
	ctx = oneStep(ctx)
	refresh = make([]*backend.StateEntry, len(nodes))
	changes, errs = make([]engine.Change, len(nodes)), make([]error, len(nodes))
	changing, err := m.specChanged(ctx, nodes)
	if err != nil {
		return nil, nil, nil, err
	}
	// The nodes read together, by runtime (their settings are the run's).
	listed, desired, lives, err := m.readListed(ctx, nodes, runtime.ReadLiveOptions{Snapshot: snapshot, Plan: true, Changing: changing})
	if err != nil {
		return nil, nil, nil, err
	}
	alone := make([]bool, len(nodes))
	for i := range alone {
		alone[i] = true
	}
	// known[i]: node i's live object as the read found it, for the preview
	// alone of an object that changes: its dry-run needs no read of its own.
	known := make([]*engine.Resource, len(nodes))
	for _, i := range listed {
		alone[i] = false
	}
	for k, i := range listed {
		in, l := nodes[i], lives[k]
		prior, err := m.priorResource(ctx, in)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case l.Err != nil:
			alone[i] = true
		case desired[k] == nil:
			// Not in the spec (to delete): what the read found of it.
			changes[i] = engine.Diff(in.ID, engine.Kubernetes, nil, l.Resource, prior)
			if in.Key.Revision != 0 && changes[i].Action == engine.UnChanged {
				refresh[i] = refreshEntry(in.ID, nil, nil, l.Resource, prior)
			}
			truncateValues(&changes[i])
		case l.Resource != nil && !l.Unchanged && l.Planned != nil && prior != nil:
			c, ok, err := m.previewPlanned(ctx, in, desired[k], l.Resource, l.Planned, prior)
			switch {
			case err != nil && !permanent(err):
				return nil, nil, nil, err
			case err != nil:
				errs[i] = err
			case ok:
				changes[i] = c
			default:
				alone[i], known[i] = true, l.Resource
			}
		case l.Resource != nil && (!l.Unchanged || prior == nil):
			alone[i], known[i] = true, l.Resource
		case l.Resource == nil:
			changes[i] = engine.Diff(in.ID, engine.Kubernetes, desired[k], nil, prior)
		default:
			live := l.Resource
			live.DependsOn = desired[k].DependsOn // no references: recordedDeps
			changes[i] = engine.Diff(in.ID, engine.Kubernetes, live, live, prior)
			if changes[i].Wait, err = m.pendingWait(ctx, in, desired[k], live); err != nil {
				if !permanent(err) {
					return nil, nil, nil, err
				}
				errs[i] = err
			}
			if in.Key.Revision != 0 {
				refresh[i] = refreshEntry(in.ID, desired[k], nil, live, prior)
			}
			truncateValues(&changes[i])
		}
	}
	for i, in := range nodes {
		if !alone[i] || errs[i] != nil {
			continue
		}
		c, r, err := m.preview(ctx, in, known[i])
		switch {
		case err == nil:
			changes[i], refresh[i] = c, r
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

// previewPlanned is Preview's change of in, an object kumo recorded (prior)
// whose apply the runtime computed (planned, from live as listed) from the
// spec's resource res: ok is false, with no error, when the apply would not
// send res as it is (a secret store reference resolved into it, an ignore
// rule keeping fields as they are live), or when the change is none after
// all: Preview then asks for a dry-run.
func (m *Manager) previewPlanned(ctx context.Context, in Node, res, live, planned, prior *engine.Resource) (_ engine.Change, ok bool, _ error) {
	refs, err := engine.SecretRefsOf(res)
	if err != nil {
		return engine.Change{}, false, kindErr(ErrInvalid, err)
	}
	if len(refs) > 0 {
		return engine.Change{}, false, nil
	}
	ws, err := m.storedWorkspace(ctx, in.Key.Workspace)
	if err != nil {
		return engine.Change{}, false, err
	}
	if selected, _ := ws.Drift.Selects(res.ID, string(res.Type)); selected {
		return engine.Change{}, false, nil
	}
	change := engine.Diff(in.ID, res.Type, planned, live, prior)
	if change.Action != engine.Update {
		return engine.Change{}, false, nil
	}
	truncateValues(&change)
	return change, true, nil
}

// specChanged reports whether nodes (of one run) hold something the run's
// spec applies over what the release before recorded, and the spec is not
// that release's (an update, a rollback): those objects likely change, which
// runtime.ReadLiveOptions.Changing tells the read. What the spec adds is
// created, and what it dropped (a destroy's every node, unmarked in a
// preview batch) deleted: neither is planned.
func (m *Manager) specChanged(ctx context.Context, nodes []Node) (bool, error) {
	if len(nodes) == 0 {
		return false, nil
	}
	in := nodes[0]
	p, err := m.prior(ctx, in.Key.Project, in.Key.Workspace, in.PriorRevision)
	if err != nil || p == nil || p.rel.SpecHash == in.SpecHash {
		return false, err
	}
	spec, err := m.spec(ctx, in.SpecHash)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(nodes, func(n Node) bool { return spec.resource(n.ID) != nil && p.resource(n.ID) != nil }), nil
}
