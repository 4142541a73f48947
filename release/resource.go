package release

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// Node names one resource of a run.
type Node struct {
	// Key is the run's release; a zero Revision means a preview with no release.
	Key           backend.ReleaseKey
	SpecHash      string
	PriorRevision int
	ID            string
	// Delete: the resource is in the prior state but no longer desired.
	Delete   bool
	Settings runspec.RuntimeSettings
	// Wait and Timeout are the run's wait policy (engine.WaitPolicyOf): when
	// an applied node is done. Empty / zero: healthy, engine.DefaultWaitTimeout.
	Wait    string
	Timeout time.Duration
}

// maxPreviewValue bounds a field value carried in a preview result, so a large
// ConfigMap does not bloat workflow history; the full object is in the backend.
const maxPreviewValue = 256

// Preview reads one resource live, dry-runs the desired version and returns the
// three-way diff against live and the prior state. It writes nothing. In a run
// with a release, refresh says that nothing would change but the live resource
// differs from what the prior state recorded: once the run is approved, Refresh
// brings the release's record of it up to date without the object being
// touched.
func (m *Manager) Preview(ctx context.Context, in Node) (_ engine.Change, refresh bool, _ error) {
	c, e, err := m.preview(ctx, in)
	return c, e != nil, err
}

// PreviewAndRefresh is Preview that records the refreshed state at once: how
// runs started before refreshes were deferred to their approval preview, kept
// for them.
func (m *Manager) PreviewAndRefresh(ctx context.Context, in Node) (engine.Change, error) {
	c, e, err := m.preview(ctx, in)
	if err == nil && e != nil {
		err = m.Record(ctx, in.Key, *e)
	}
	return c, err
}

// preview is Preview returning the state entry a refresh would record.
func (m *Manager) preview(ctx context.Context, in Node) (_ engine.Change, refresh *backend.StateEntry, _ error) {
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
	rt, err := m.runtime(target.Type, in.Settings)
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
		if p, ok := rt.(runtime.Previewer); ok {
			live, planned, err = p.Preview(ctx, desired)
			err = nodeError(err)
		} else if err = readLive(); err == nil {
			planned, err = rt.Apply(ctx, desired, runtime.ApplyOptions{DryRun: true, ForceConflicts: force(in, prior)})
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
	if in.Key.Revision != 0 && change.Action == engine.UnChanged {
		refresh = refreshEntry(in.ID, res, refs, live, prior)
	}
	truncateValues(&change)
	return change, refresh, nil
}

// refreshEntry is the state entry that brings a release's record of an
// unchanged resource up to date with live (nil: absent), or nil when the prior
// state records it as it is. The release starts from the prior state; recording
// only what differs from it, a re-apply of an unchanged spec writes (almost)
// nothing. res is the node's spec resource (nil for one the spec dropped): the
// record takes its dependencies, references included.
func refreshEntry(id string, res *engine.Resource, refs []engine.Ref, live, prior *engine.Resource) *backend.StateEntry {
	if live != nil && res != nil {
		live.DependsOn = recordedDeps(res, refs)
	}
	if sameRecord(live, prior) {
		return nil
	}
	return &backend.StateEntry{ID: id, Resource: live, Deleted: live == nil}
}

// liveLookup returns a referenced resource's live attributes, nil when absent.
type liveLookup func(ctx context.Context, id string) (map[string]any, error)

// withRefs returns res with its references resolved through lookup. In a preview
// (skipAbsent) a reference to a resource that does not exist yet stays as
// written, and pending names that resource. A missing field is an error either
// way, as the apply would fail on it.
func withRefs(ctx context.Context, res *engine.Resource, refs []engine.Ref, lookup liveLookup, skipAbsent bool) (_ *engine.Resource, pending string, _ error) {
	if len(refs) == 0 {
		return res, "", nil
	}
	lives := map[string]map[string]any{}
	var resolvable []engine.Ref
	for _, ref := range refs {
		l, done := lives[ref.ResourceID]
		if !done {
			var err error
			if l, err = lookup(ctx, ref.ResourceID); err != nil {
				return nil, "", err
			}
			lives[ref.ResourceID] = l
		}
		switch {
		case l != nil || !skipAbsent:
			resolvable = append(resolvable, ref)
		case pending == "":
			pending = ref.ResourceID
		}
	}
	attrs, err := engine.ResolveRefs(res.Attributes, resolvable, func(id string) (map[string]any, bool) {
		l := lives[id]
		return l, l != nil
	})
	if err != nil {
		return nil, "", kindf(ErrResourceFailed, "%s: %v", res.ID, err)
	}
	out := *res
	out.Attributes = attrs
	return &out, pending, nil
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

// readLive looks references up in the infrastructure (for a preview of in).
func (m *Manager) readLive(spec *specIndex, in Node) liveLookup {
	return func(ctx context.Context, id string) (map[string]any, error) {
		rt, err := m.runtime(spec.resource(id).Type, in.Settings)
		if err != nil {
			return nil, err
		}
		target, err := m.withRecordedState(ctx, in, spec.resource(id))
		if err != nil {
			return nil, err
		}
		live, err := rt.Read(ctx, target)
		if errors.Is(err, runtime.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, nodeError(fmt.Errorf("read %s, referenced by %s: %w", id, in.ID, err))
		}
		if live == nil {
			return nil, nil
		}
		return live.Attributes, nil
	}
}

// readState looks references up in what this release recorded for them (their
// nodes ran before this one: references are dependency edges), or, for a
// resource this release left unchanged, in the prior state it starts from.
func (m *Manager) readState(in Node) liveLookup {
	return func(ctx context.Context, id string) (map[string]any, error) {
		res, err := m.recorded(ctx, in, id)
		if err != nil || res == nil {
			return nil, err
		}
		return res.Attributes, nil
	}
}

// Apply applies one desired resource, its references resolved from the
// live results this release recorded for them, and records the result. The
// result says whether the node still has to wait for the resource's health
// (see Wait), judged from the applied object: a kind that is healthy once
// applied (a ConfigMap) needs no wait at all.
func (m *Manager) Apply(ctx context.Context, in Node) (ApplyResult, error) {
	return m.apply(ctx, in, m.recordNow(in.Key))
}

// record stores one resource's outcome: at once (recordNow), or with others
// (Batch).
type record func(ctx context.Context, e backend.StateEntry) error

// recordNow records each outcome in its own write.
func (m *Manager) recordNow(key backend.ReleaseKey) record {
	return func(ctx context.Context, e backend.StateEntry) error { return m.Record(ctx, key, e) }
}

func (m *Manager) apply(ctx context.Context, in Node, rec record) (ApplyResult, error) {
	spec, res, err := m.desired(ctx, in)
	if err != nil {
		return ApplyResult{}, err
	}
	policy, err := engine.WaitPolicyOf(res, in.Wait, in.Timeout)
	if err != nil {
		return ApplyResult{}, kindf(ErrInvalid, "%s: %v", res.ID, err)
	}
	refs, err := spec.refsOf(res.ID)
	if err != nil {
		return ApplyResult{}, err
	}
	desired, _, err := withRefs(ctx, res, refs, m.readState(in), false)
	if err != nil {
		return ApplyResult{}, err
	}
	rt, err := m.runtime(res.Type, in.Settings)
	if err != nil {
		return ApplyResult{}, err
	}
	if desired, err = m.withRecordedState(ctx, in, desired); err != nil {
		return ApplyResult{}, err
	}
	prior, err := m.priorResource(ctx, in)
	if err != nil {
		return ApplyResult{}, err
	}
	live, err := m.applyAndRecord(ctx, rec, in, rt, desired, recordedDeps(res, refs), force(in, prior))
	if err != nil {
		return ApplyResult{}, err
	}
	return waitAfterApply(rt, live, policy), nil
}

// applyAndRecord applies desired and records the result. A failed apply
// that left something behind (a tainted object) is recorded too, so the next
// attempt continues from it instead of creating another object.
func (m *Manager) applyAndRecord(ctx context.Context, rec record, in Node, rt runtime.Runtime, desired *engine.Resource, deps []string, force bool) (*engine.Resource, error) {
	live, err := rt.Apply(ctx, desired, runtime.ApplyOptions{ForceConflicts: force})
	if live != nil {
		live.DependsOn = deps
		// Also when the run was cancelled: the object exists either way.
		if perr := rec(context.WithoutCancel(ctx), backend.StateEntry{ID: in.ID, Resource: live}); perr != nil && err == nil {
			return live, perr
		}
	}
	return live, nodeError(err)
}

// desired returns the run's spec and the node's resource in it.
func (m *Manager) desired(ctx context.Context, in Node) (*specIndex, *engine.Resource, error) {
	spec, err := m.spec(ctx, in.SpecHash)
	if err != nil {
		return nil, nil, err
	}
	res := spec.resource(in.ID)
	if res == nil {
		return nil, nil, kindf(ErrInvalid, "resource %s is not in spec %s", in.ID, shortHash(in.SpecHash))
	}
	return spec, res, nil
}

// Delete removes one recorded resource, waits until it is gone, and records a
// tombstone. Deleting what is already gone succeeds.
func (m *Manager) Delete(ctx context.Context, in Node) error {
	return m.delete(ctx, in, m.recordNow(in.Key))
}

func (m *Manager) delete(ctx context.Context, in Node, rec record) error {
	wait, err := m.startDelete(ctx, in, rec)
	return finishDelete(ctx, rec, in, wait, err)
}

// startDelete issues the delete of one recorded resource. A nil wait: the
// resource is gone and its tombstone recorded. Else it is still going (its
// runtime waits apart, runtime.DeleteStarter): wait returns once it is gone,
// and the caller records the tombstone then.
func (m *Manager) startDelete(ctx context.Context, in Node, rec record) (wait func(context.Context) error, _ error) {
	prior, err := m.priorResource(ctx, in)
	if err != nil {
		return nil, err
	}
	if prior == nil {
		return nil, kindf(ErrInvalid, "resource %s is not in the prior state", in.ID)
	}
	return m.startDeleteAndRecord(ctx, rec, in, prior)
}

// deleteAndRecord deletes res, waiting until it is gone, and records a tombstone.
func (m *Manager) deleteAndRecord(ctx context.Context, rec record, in Node, res *engine.Resource) error {
	wait, err := m.startDeleteAndRecord(ctx, rec, in, res)
	return finishDelete(ctx, rec, in, wait, err)
}

// finishDelete waits for a started delete still going and records its
// tombstone.
func finishDelete(ctx context.Context, rec record, in Node, wait func(context.Context) error, err error) error {
	if err != nil || wait == nil {
		return err
	}
	if err := wait(ctx); err != nil {
		return err
	}
	return tombstone(ctx, rec, in)
}

// startDeleteAndRecord is startDelete of res.
func (m *Manager) startDeleteAndRecord(ctx context.Context, rec record, in Node, res *engine.Resource) (func(context.Context) error, error) {
	rt, err := m.runtime(res.Type, in.Settings)
	if err != nil {
		return nil, err
	}
	if res, err = m.withRecordedState(ctx, in, res); err != nil {
		return nil, err
	}
	var wait func(context.Context) error
	if ds, ok := rt.(runtime.DeleteStarter); ok {
		wait, err = ds.StartDelete(ctx, res)
	} else {
		err = rt.Delete(ctx, res)
	}
	if err != nil {
		return nil, nodeError(err)
	}
	if wait != nil {
		return func(ctx context.Context) error { return nodeError(wait(ctx)) }, nil
	}
	return nil, tombstone(ctx, rec, in)
}

// tombstone records that in's resource is gone.
func tombstone(ctx context.Context, rec record, in Node) error {
	return rec(ctx, backend.StateEntry{ID: in.ID, Deleted: true})
}

func (m *Manager) priorResource(ctx context.Context, in Node) (*engine.Resource, error) {
	p, err := m.prior(ctx, in.Key.Project, in.Key.Workspace, in.PriorRevision)
	return p.resource(in.ID), err
}

func (m *Manager) runtime(typ engine.Type, s runspec.RuntimeSettings) (runtime.Runtime, error) {
	rt, err := m.runtimes.For(typ, s)
	if err != nil {
		return nil, kindErr(ErrInvalid, err)
	}
	return rt, nil
}

// nodeError keeps transient runtime failures retryable and makes permanent ones
// (the object is invalid) fail the node at once.
func nodeError(err error) error {
	if runtime.IsPermanent(err) {
		return kindErr(ErrResourceFailed, err)
	}
	return err
}

// sameRecord reports whether live would be recorded exactly as prior already is
// (resourceVersion and status included, and a Terraform state).
func sameRecord(live, prior *engine.Resource) bool {
	if live == nil || prior == nil {
		return live == prior
	}
	return slices.Equal(live.DependsOn, prior.DependsOn) &&
		terraformState(live) == terraformState(prior) &&
		reflect.DeepEqual(engine.Normalize(live.Attributes), engine.Normalize(prior.Attributes))
}

// recordedDeps is what state records as a resource's dependencies: the explicit
// ones plus those implied by references, so a later destroy or removal can order
// deletes without the spec that created them.
func recordedDeps(res *engine.Resource, refs []engine.Ref) []string {
	deps := slices.Clone(res.DependsOn)
	for _, ref := range refs {
		if !slices.Contains(deps, ref.ResourceID) {
			deps = append(deps, ref.ResourceID)
		}
	}
	return deps
}

func findResource(rs []engine.Resource, id string) *engine.Resource {
	for i := range rs {
		if rs[i].ID == id {
			return &rs[i]
		}
	}
	return nil
}

// maxPreviewFields bounds how many field changes a preview result lists per
// resource: a ConfigMap whose 20,000 keys all change would otherwise put a
// 1.4 MB event into workflow history. The rest are counted in one last entry.
const maxPreviewFields = 100

func truncateValues(c *engine.Change) {
	if n := len(c.Fields); n > maxPreviewFields {
		c.Fields = append(c.Fields[:maxPreviewFields-1:maxPreviewFields-1],
			engine.FieldChange{Path: fmt.Sprintf("(%d more fields change)", n-maxPreviewFields+1)})
	}
	for i := range c.Fields {
		c.Fields[i].Before = truncate(c.Fields[i].Before)
		c.Fields[i].After = truncate(c.Fields[i].After)
	}
}

// truncate cuts a long string value, keeping its length and a hash of the
// whole: a change after the cut still shows, and changes the plan's digest.
func truncate(v any) any {
	s, ok := v.(string)
	if !ok || len(s) <= maxPreviewValue {
		return v
	}
	sum := sha256.Sum256([]byte(s))
	return s[:maxPreviewValue] + fmt.Sprintf("... (%d bytes, sha256 %x)", len(s), sum[:6])
}

// Compensate undoes what a failed apply did to one resource: a created
// resource is deleted, an updated or deleted one is applied again as the prior
// state recorded it. The state entry follows, so the release records the
// cluster as it is after the undo.
func (m *Manager) Compensate(ctx context.Context, in Node, action engine.Action) error {
	if action == engine.Adopt {
		// The apply changed nothing but who manages the object: leave it.
		return nil
	}
	if action == engine.Create {
		_, res, err := m.desired(ctx, in)
		if err != nil {
			return err
		}
		return m.deleteAndRecord(ctx, m.recordNow(in.Key), in, res)
	}
	prior, err := m.priorResource(ctx, in)
	if err != nil {
		return err
	}
	if prior == nil {
		return kindf(ErrResourceFailed, "cannot restore %s: it is not in the prior state", in.ID)
	}
	rt, err := m.runtime(prior.Type, in.Settings)
	if err != nil {
		return err
	}
	desired, err := m.restoreTarget(ctx, in, prior)
	if err != nil {
		return err
	}
	if desired, err = m.withRecordedState(ctx, in, desired); err != nil {
		return err
	}
	// Restoring what kumo recorded: its own fields.
	_, err = m.applyAndRecord(ctx, m.recordNow(in.Key), in, rt, desired, prior.DependsOn, true)
	return err
}
