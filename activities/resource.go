package activities

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// NodeInput names one resource of a run.
type NodeInput struct {
	// Key is the run's release; a zero Revision means a preview with no release.
	Key           backend.ReleaseKey `json:"key"`
	SpecHash      string             `json:"specHash"`
	PriorRevision int                `json:"priorRevision"`
	ID            string             `json:"id"`
	// Delete: the resource is in the prior state but no longer desired.
	Delete   bool            `json:"delete,omitempty"`
	Settings RuntimeSettings `json:"settings"`
}

// maxPreviewValue bounds a field value carried in a preview result, so a large
// ConfigMap does not bloat workflow history; the full object is in the backend.
const maxPreviewValue = 256

// PreviewResource reads one resource live, dry-runs the desired version and
// returns the three-way diff against live and the prior state. When nothing would
// change it records the live resource as this release's state, so the release ends
// with fresh state without touching the object.
func (a *Activities) PreviewResource(ctx context.Context, in NodeInput) (engine.Change, error) {
	spec, err := a.spec(ctx, in.SpecHash)
	if err != nil {
		return engine.Change{}, err
	}
	prior, err := a.priorResource(ctx, in)
	if err != nil {
		return engine.Change{}, err
	}
	res := spec.resource(in.ID)
	target := res
	if target == nil {
		target = prior
	}
	if target == nil {
		return engine.Change{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("resource %s is neither in the spec nor in the prior state", in.ID), ErrTypeInvalid, nil)
	}
	rt, err := a.runtime(target.Type, in.Settings)
	if err != nil {
		return engine.Change{}, err
	}
	// The runtime continues from what kumo recorded (Terraform: its state).
	if target, err = a.withRecordedState(ctx, in, target); err != nil {
		return engine.Change{}, err
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
			return engine.Change{}, err
		}
		var desired *engine.Resource
		var pending string
		if desired, pending, err = withRefs(ctx, target, refs, a.readLive(spec, in), true); err != nil {
			return engine.Change{}, err
		}
		if pending != "" {
			// A referenced resource does not exist yet: the values are known only
			// after it is applied, and the runtime would reject the placeholder.
			if err := readLive(); err != nil {
				return engine.Change{}, err
			}
			return pendingChange(in.ID, res.Type, live, pending), nil
		}
		if p, ok := rt.(runtime.Previewer); ok {
			live, planned, err = p.Preview(ctx, desired)
			err = nodeError(err)
		} else if err = readLive(); err == nil {
			planned, err = rt.Apply(ctx, desired, runtime.ApplyOptions{DryRun: true})
			err = nodeError(err)
		}
	}
	if err != nil {
		return engine.Change{}, err
	}
	change := engine.Diff(in.ID, target.Type, planned, live, prior)
	if in.Key.Revision != 0 && change.Action == engine.UnChanged {
		if live != nil && res != nil {
			live.DependsOn = recordedDeps(res, refs)
		}
		// The release starts from the prior state; record only what differs from
		// it, so a re-apply of an unchanged spec writes (almost) nothing.
		if !sameRecord(live, prior) {
			entry := backend.StateEntry{ID: in.ID, Resource: live, Deleted: live == nil}
			if err := a.backend.PutStateEntry(ctx, in.Key, entry); err != nil {
				return engine.Change{}, err
			}
		}
	}
	truncateValues(&change)
	return change, nil
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
		return nil, "", temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v", res.ID, err), ErrTypeNode, nil)
	}
	out := *res
	out.Attributes = attrs
	return &out, pending, nil
}

// KnownAfterApply stands, in a preview, for a value that depends on a resource
// not applied yet (or that a provider computes, see engine.KnownAfterApply).
const KnownAfterApply = engine.KnownAfterApply

// pendingChange previews a resource whose references wait for another resource.
func pendingChange(id string, typ engine.Type, live *engine.Resource, target string) engine.Change {
	action := engine.Create
	if live != nil {
		action = engine.Update
	}
	return engine.Change{ID: id, Type: typ, Action: action, Fields: []engine.FieldChange{
		{Path: "(references " + target + ")", After: KnownAfterApply},
	}}
}

// readLive looks references up in the infrastructure (for a preview of in).
func (a *Activities) readLive(spec *specIndex, in NodeInput) liveLookup {
	return func(ctx context.Context, id string) (map[string]any, error) {
		rt, err := a.runtime(spec.resource(id).Type, in.Settings)
		if err != nil {
			return nil, err
		}
		target, err := a.withRecordedState(ctx, in, spec.resource(id))
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
func (a *Activities) readState(in NodeInput) liveLookup {
	return func(ctx context.Context, id string) (map[string]any, error) {
		res, err := a.recorded(ctx, in, id)
		if err != nil || res == nil {
			return nil, err
		}
		return res.Attributes, nil
	}
}

// ApplyResource applies one desired resource, its references resolved from the
// live results this release recorded for them, and records the result.
func (a *Activities) ApplyResource(ctx context.Context, in NodeInput) error {
	spec, res, err := a.desired(ctx, in)
	if err != nil {
		return err
	}
	refs, err := spec.refsOf(res.ID)
	if err != nil {
		return err
	}
	desired, _, err := withRefs(ctx, res, refs, a.readState(in), false)
	if err != nil {
		return err
	}
	rt, err := a.runtime(res.Type, in.Settings)
	if err != nil {
		return err
	}
	if desired, err = a.withRecordedState(ctx, in, desired); err != nil {
		return err
	}
	return a.applyAndRecord(ctx, in, rt, desired, recordedDeps(res, refs))
}

// applyAndRecord applies desired, heartbeating while the runtime works (a
// terraform apply may take many minutes), and records the result. A failed apply
// that left something behind (a tainted object) is recorded too, so the next
// attempt continues from it instead of creating another object.
func (a *Activities) applyAndRecord(ctx context.Context, in NodeInput, rt runtime.Runtime, desired *engine.Resource, deps []string) error {
	stop := heartbeat(ctx, 2*time.Second)
	live, err := rt.Apply(ctx, desired, runtime.ApplyOptions{})
	stop()
	if live != nil {
		live.DependsOn = deps
		// Also when the run was cancelled: the object exists either way.
		if perr := a.backend.PutStateEntry(context.WithoutCancel(ctx), in.Key, backend.StateEntry{ID: in.ID, Resource: live}); perr != nil && err == nil {
			return perr
		}
	}
	return nodeError(err)
}

// desired returns the run's spec and the node's resource in it.
func (a *Activities) desired(ctx context.Context, in NodeInput) (*specIndex, *engine.Resource, error) {
	spec, err := a.spec(ctx, in.SpecHash)
	if err != nil {
		return nil, nil, err
	}
	res := spec.resource(in.ID)
	if res == nil {
		return nil, nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("resource %s is not in spec %s", in.ID, shortHash(in.SpecHash)), ErrTypeInvalid, nil)
	}
	return spec, res, nil
}

// DeleteResource removes one recorded resource and waits until it is gone,
// heartbeating so a crashed worker's delete is retried within seconds.
func (a *Activities) DeleteResource(ctx context.Context, in NodeInput) error {
	prior, err := a.priorResource(ctx, in)
	if err != nil {
		return err
	}
	if prior == nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("resource %s is not in the prior state", in.ID), ErrTypeInvalid, nil)
	}
	return a.deleteAndRecord(ctx, in, prior)
}

// deleteAndRecord deletes res, waiting until it is gone while heartbeating (so a
// crashed worker's delete is retried within seconds), and records a tombstone.
func (a *Activities) deleteAndRecord(ctx context.Context, in NodeInput, res *engine.Resource) error {
	rt, err := a.runtime(res.Type, in.Settings)
	if err != nil {
		return err
	}
	if res, err = a.withRecordedState(ctx, in, res); err != nil {
		return err
	}
	stop := heartbeat(ctx, 2*time.Second)
	err = rt.Delete(ctx, res)
	stop()
	if err != nil {
		return nodeError(err)
	}
	return a.backend.PutStateEntry(ctx, in.Key, backend.StateEntry{ID: in.ID, Deleted: true})
}

func (a *Activities) priorResource(ctx context.Context, in NodeInput) (*engine.Resource, error) {
	prior, err := a.priorRelease(ctx, in.Key.Project, in.Key.Workspace, in.PriorRevision)
	if err != nil || prior == nil || prior.State == nil {
		return nil, err
	}
	return findResource(prior.State.Resources, in.ID), nil
}

func (a *Activities) runtime(typ engine.Type, s RuntimeSettings) (runtime.Runtime, error) {
	rt, err := a.runtimes.For(typ, s)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalid, nil)
	}
	return rt, nil
}

// nodeError keeps transient runtime failures retryable and makes permanent ones
// (the object is invalid) fail the node at once.
func nodeError(err error) error {
	if runtime.IsPermanent(err) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeNode, nil)
	}
	return err
}

func heartbeat(ctx context.Context, every time.Duration) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
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

func truncateValues(c *engine.Change) {
	for i := range c.Fields {
		c.Fields[i].Before = truncate(c.Fields[i].Before)
		c.Fields[i].After = truncate(c.Fields[i].After)
	}
}

func truncate(v any) any {
	s, ok := v.(string)
	if !ok || len(s) <= maxPreviewValue {
		return v
	}
	return s[:maxPreviewValue] + fmt.Sprintf("... (%d bytes)", len(s))
}

// CompensateInput names one node of a failed apply to undo, and what the apply
// did to it.
type CompensateInput struct {
	NodeInput
	Action engine.Action `json:"action"`
}

// CompensateResource undoes what a failed apply did to one resource: a created
// resource is deleted, an updated or deleted one is applied again as the prior
// state recorded it. The state entry follows, so the release records the
// cluster as it is after the undo.
func (a *Activities) CompensateResource(ctx context.Context, in CompensateInput) error {
	if in.Action == engine.Create {
		_, res, err := a.desired(ctx, in.NodeInput)
		if err != nil {
			return err
		}
		return a.deleteAndRecord(ctx, in.NodeInput, res)
	}
	prior, err := a.priorResource(ctx, in.NodeInput)
	if err != nil {
		return err
	}
	if prior == nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("cannot restore %s: it is not in the prior state", in.ID), ErrTypeNode, nil)
	}
	rt, err := a.runtime(prior.Type, in.Settings)
	if err != nil {
		return err
	}
	desired, err := a.restoreTarget(ctx, in.NodeInput, prior)
	if err != nil {
		return err
	}
	if desired, err = a.withRecordedState(ctx, in.NodeInput, desired); err != nil {
		return err
	}
	return a.applyAndRecord(ctx, in.NodeInput, rt, desired, prior.DependsOn)
}
