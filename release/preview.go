package release

import (
	"context"
	"errors"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// Preview reads one resource live, dry-runs the desired version and returns the
// three-way diff against live and the prior state. It writes nothing. In a run
// with a release, refresh says that nothing would change but the live resource
// differs from what the prior state recorded: once the run is approved, Refresh
// brings the release's record of it up to date without the object being
// touched.
func (m *Manager) Preview(ctx context.Context, in Node) (_ engine.Change, refresh bool, _ error) {
	c, e, err := m.preview(ctx, in, nil)
	return c, e != nil, err
}

// PreviewAndRefresh is Preview that records the refreshed state at once: how
// runs started before refreshes were deferred to their approval preview, kept
// for them.
func (m *Manager) PreviewAndRefresh(ctx context.Context, in Node) (engine.Change, error) {
	c, e, err := m.preview(ctx, in, nil)
	if err == nil && e != nil {
		err = m.Record(ctx, in.Key, *e)
	}
	return c, err
}

// preview is Preview returning the state entry a refresh would record.
// listed is the live resource as a list of its kind and namespace just found
// it (PreviewBatch), read instead of reading it alone; nil: read it here.
func (m *Manager) preview(ctx context.Context, in Node, listed *engine.Resource) (_ engine.Change, refresh *backend.StateEntry, _ error) {
	ctx = oneStep(ctx)
	spec, err := m.spec(ctx, in.SpecHash)
	if err != nil {
		return engine.Change{}, nil, err
	}
	prior, err := m.priorResource(ctx, in)
	if err != nil {
		return engine.Change{}, nil, err
	}
	res := spec.resource(in.ID)
	target := res
	if target == nil {
		target = prior
	}
	if target == nil {
		return engine.Change{}, nil, kindf(ErrInvalid, "resource %s is neither in the spec nor in the prior state", in.ID)
	}
	rt, err := m.runtime(ctx, in.Key.Workspace, target.Type, in.Settings)
	if err != nil {
		return engine.Change{}, nil, err
	}
	// The runtime continues from what kumo recorded (Terraform: its state).
	if target, err = m.withRecordedState(ctx, in, target); err != nil {
		return engine.Change{}, nil, err
	}
	var live, planned *engine.Resource
	var refs []engine.Ref
	readLive := func() (err error) {
		if listed != nil {
			live = listed
			return nil
		}
		live, err = rt.Read(ctx, target)
		if errors.Is(err, runtime.ErrNotFound) {
			live, err = nil, nil
		}
		return nodeError(err)
	}
	if res == nil {
		err = readLive()
	} else {
		if refs, err = spec.refsOf(res.ID); err != nil {
			return engine.Change{}, nil, err
		}
		var desired *engine.Resource
		var pending string
		if desired, pending, err = withRefs(ctx, target, refs, m.readLive(spec, in), true); err != nil {
			return engine.Change{}, nil, err
		}
		if pending != "" {
			// A referenced resource does not exist yet: the values are known only
			// after it is applied, and the runtime would reject the placeholder.
			if err := readLive(); err != nil {
				return engine.Change{}, nil, err
			}
			return pendingChange(in.ID, res.Type, live, "(references "+pending+")"), nil, nil
		}
		if desired, err = m.withSecrets(ctx, in, spec, desired); err != nil {
			return engine.Change{}, nil, err
		}
		if p, ok := rt.(runtime.Previewer); ok {
			live, planned, err = p.Preview(ctx, desired)
			err = nodeError(err)
		} else if err = readLive(); err == nil {
			if desired, err = m.respectIgnored(ctx, in, rt, desired, live); err != nil {
				return engine.Change{}, nil, err
			}
			planned, err = rt.Apply(ctx, desired, runtime.ApplyOptions{DryRun: true, ForceConflicts: force(in, prior)})
			// A refusal for a missing namespace becomes the object as written
			// or an error; any other error (a kind not served yet) goes on.
			planned, err = intoNewNamespace(spec, planned, err)
			var notServed *runtime.NotServedError
			// Only a kind the cluster does not serve is looked up: DefiningCRD
			// goes through the whole spec.
			if errors.As(err, &notServed) {
				if crd := spec.DefiningCRD(res); crd != "" {
					// No dry-run possible yet: the kind is served once the CRD is applied.
					return pendingChange(in.ID, res.Type, live, "(not dry-run: its kind is defined by "+crd+", applied first)"), nil, nil
				}
			}
			err = nodeError(err)
		}
	}
	if err != nil {
		return engine.Change{}, nil, err
	}
	change := engine.Diff(in.ID, target.Type, planned, live, prior)
	if err := takeover(ctx, rt, &change, target, live, prior, planned); err != nil {
		return engine.Change{}, nil, err
	}
	if change.Action == engine.UnChanged {
		if change.Wait, err = m.pendingWait(ctx, in, res, live); err != nil {
			return engine.Change{}, nil, err
		}
	}
	if change.Action == engine.Delete && res == nil {
		p, err := engine.DeletePolicyOf(prior)
		if err != nil {
			return engine.Change{}, nil, kindErr(ErrInvalid, err)
		}
		change.Retain = p == engine.DeleteRetain
	}
	if in.Key.Revision != 0 && change.Action == engine.UnChanged {
		refresh = refreshEntry(in.ID, res, refs, live, prior)
	}
	truncateValues(&change)
	return change, refresh, nil
}

// pendingChange previews a resource that cannot be dry-run before another
// resource is applied (one it references, the CRD of its kind); why says so.
func pendingChange(id string, typ engine.Type, live *engine.Resource, why string) engine.Change {
	action := engine.Create
	if live != nil {
		action = engine.Update
	}
	return engine.Change{ID: id, Type: typ, Action: action, Fields: []engine.FieldChange{
		{Path: why, After: engine.KnownAfterApply},
	}}
}

// intoNewNamespace takes a dry run refused because the object's namespace
// does not exist: the object as written when the spec creates that
// namespace (it is applied first), else an error naming both, so a preview
// fails where the apply would. Other results pass through.
func intoNewNamespace(spec *specIndex, planned *engine.Resource, err error) (*engine.Resource, error) {
	var missing *runtime.NamespaceMissingError
	if !errors.As(err, &missing) {
		return planned, err
	}
	if spec.CreatesNamespace(missing.Namespace) {
		return missing.Planned, nil
	}
	return nil, kindf(ErrInvalid, "%s: its namespace %q does not exist and the spec does not create it (add a Namespace %q to the spec, or create it first)",
		missing.ID, missing.Namespace, missing.Namespace)
}
