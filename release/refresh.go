package release

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// refreshParallel bounds the resources Refresh reads one by one at once.
const refreshParallel = 4

// Refresh brings a release's record of nodes up to date with what is live, the
// nodes of one run with a release that its preview found unchanged but
// recorded differently (Preview's refresh): it reads them again and records,
// in one write, each whose live object still differs from what the prior
// state recorded, as Preview would have (its dependencies as the spec says,
// references included; one gone is recorded deleted). It applies nothing.
// Kubernetes resources without references are read together
// (runtime.LiveReader: one list per kind and namespace, shared by the calls
// of one snapshot), the others one by one, a few at a time.
//
// A preview writes nothing, so a run rejected at its approval leaves its
// release as it found it; the run refreshes once approved, before it applies.
// Called twice, Refresh records the same. It returns how many it recorded.
func (m *Manager) Refresh(ctx context.Context, nodes []Node, snapshot string) (int, error) {
	if len(nodes) == 0 {
		return 0, nil
	}
	key := nodes[0].Key
	if key.Revision == 0 {
		return 0, kindf(ErrInvalid, "refresh of %s: the run has no release", nodes[0].ID)
	}
	for _, in := range nodes {
		if in.Key != key {
			return 0, kindf(ErrInvalid, "refresh: %s is of release %s, not %s", in.ID, in.Key, key)
		}
	}
	entries := make([]*backend.StateEntry, len(nodes))
	alone, err := m.refreshListed(ctx, nodes, snapshot, entries)
	if err != nil {
		return 0, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(refreshParallel)
	for _, i := range alone {
		g.Go(func() (err error) {
			entries[i], err = m.refreshOne(gctx, nodes[i])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	var record []backend.StateEntry
	for _, e := range entries {
		if e != nil {
			record = append(record, *e)
		}
	}
	if len(record) == 0 {
		return 0, nil
	}
	if err := m.RecordBatch(ctx, key, record); err != nil {
		return 0, fmt.Errorf("record %d refreshed resources: %w", len(record), err)
	}
	return len(record), nil
}

// refreshListed reads the nodes it can in one go (readListed), setting their
// entries, and returns the others (and those the read failed for), to read
// alone.
func (m *Manager) refreshListed(ctx context.Context, nodes []Node, snapshot string, entries []*backend.StateEntry) (alone []int, _ error) {
	listed, desired, lives, err := m.readListed(ctx, nodes, runtime.ReadLiveOptions{Snapshot: snapshot})
	if err != nil {
		return nil, err
	}
	read := make([]bool, len(nodes))
	for k, i := range listed {
		if lives[k].Err != nil {
			continue
		}
		read[i] = true
		prior, err := m.priorResource(ctx, nodes[i])
		if err != nil {
			return nil, err
		}
		entries[i] = refreshEntry(nodes[i].ID, desired[k], nil, lives[k].Resource, prior)
	}
	for i := range nodes {
		if !read[i] {
			alone = append(alone, i)
		}
	}
	return alone, nil
}

// readListed reads the nodes a LiveReader can read together (listable) in
// one call (with opts), and returns which (by index in nodes), their spec resources (nil
// for a node to delete: the spec no longer has it) and what it read of each,
// in that order.
func (m *Manager) readListed(ctx context.Context, nodes []Node, opts runtime.ReadLiveOptions) (listed []int, desired []*engine.Resource, lives []runtime.Live, _ error) {
	var reader runtime.LiveReader
	var targets []*engine.Resource
	for i, in := range nodes {
		target, res, err := m.listable(ctx, in, &reader)
		if err != nil {
			return nil, nil, nil, err
		}
		if target != nil {
			listed = append(listed, i)
			targets = append(targets, target)
			desired = append(desired, res)
		}
	}
	if len(listed) > 0 {
		lives = reader.ReadLive(ctx, targets, opts)
	}
	return listed, desired, lives, nil
}

// listable returns what a LiveReader reads of in when it can read it with the
// others, nil otherwise: a Kubernetes resource of the spec without references
// (target and res: its spec resource), or one the spec no longer has, as the
// prior state recorded it (res nil: a node to delete; preview batches do not
// mark them). *reader is the runtime's reader, found on the first such
// resource (the nodes share their settings).
func (m *Manager) listable(ctx context.Context, in Node, reader *runtime.LiveReader) (target, res *engine.Resource, _ error) {
	spec, err := m.spec(ctx, in.SpecHash)
	if err != nil {
		return nil, nil, err
	}
	if res = spec.resource(in.ID); res != nil {
		if refs, err := spec.refsOf(in.ID); err != nil || len(refs) > 0 {
			return nil, nil, nil
		}
		target = res
	} else if target, err = m.priorResource(ctx, in); err != nil || target == nil {
		return nil, nil, err
	}
	if target.Type != engine.Kubernetes {
		return nil, nil, nil
	}
	if *reader == nil {
		rt, err := m.runtime(ctx, in.Key.Workspace, target.Type, in.Settings)
		if err != nil {
			return nil, nil, nil
		}
		if *reader, _ = rt.(runtime.LiveReader); *reader == nil {
			return nil, nil, nil
		}
	}
	return target, res, nil
}

// refreshOne reads one node's resource live, as Preview reads it (from the
// state kumo recorded for it), and returns the entry that refreshes its record.
func (m *Manager) refreshOne(ctx context.Context, in Node) (*backend.StateEntry, error) {
	spec, err := m.spec(ctx, in.SpecHash)
	if err != nil {
		return nil, err
	}
	prior, err := m.priorResource(ctx, in)
	if err != nil {
		return nil, err
	}
	res := spec.resource(in.ID)
	var refs []engine.Ref
	if res != nil {
		if refs, err = spec.refsOf(in.ID); err != nil {
			return nil, err
		}
	}
	target := res
	if target == nil {
		target = prior
	}
	live, err := m.readNode(ctx, in, target)
	if err != nil {
		return nil, err
	}
	return refreshEntry(in.ID, res, refs, live, prior), nil
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
