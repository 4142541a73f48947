package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/runtime"
)

var _ runtime.DriftReader = (*Runtime)(nil)

// listPage bounds one page of a list call.
const listPage = 500

// Drift checks recorded Kubernetes objects against live. Objects of one kind in
// one namespace are read with one (paged) list call rather than a GET each.
// An object whose managedFields and values show that applying it again would
// change nothing (drift.ApplyChangesNothing) is in sync without another
// request; any other is dry-run applied as kumo (forced, as an apply is) and
// compared by the fields kumo would manage (drift.Kubernetes), so fields the
// apiserver defaults or normalises are never drift. An object that is
// gone is drift.Missing; one whose kind the cluster no longer serves, or that
// cannot be read or dry-run, is drift.Error, unless the dry run is refused as
// invalid and the fields kumo sets differ from live: then it is drifted, with
// the apiserver's refusal as its error.
func (r *Runtime) Drift(ctx context.Context, desired []*engine.Resource, opts runtime.DriftOptions) []drift.Result {
	parallel := opts.Parallelism
	if parallel <= 0 {
		parallel = 10
	}
	out := make([]drift.Result, len(desired))
	for i, res := range desired {
		out[i] = drift.Result{ID: res.ID, Type: string(engine.Kubernetes)}
	}
	targets, lives, readErrs := r.readByList(ctx, desired, parallel, r.readGroup)
	for i, t := range targets {
		if t == nil {
			out[i].Status, out[i].Error = drift.Error, readErrs[i].Error()
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i, t := range targets {
		if t == nil {
			continue
		}
		switch {
		case readErrs[i] != nil:
			out[i].Status, out[i].Error = drift.Error, readErrs[i].Error()
			continue
		case lives[i] == nil:
			out[i].Status = drift.Missing
			continue
		case drift.ApplyChangesNothing(applyBody(desired[i].Attributes, t.ns), lives[i].Object, FieldManager):
			// kumo's fields are all live with its values: a dry-run would
			// return live as it is, so there is nothing to ask the apiserver.
			out[i].Status = drift.InSync
			continue
		}
		g.Go(func() error {
			fields, err := r.compare(gctx, t, desired[i], lives[i])
			switch {
			case err != nil && len(fields) > 0:
				// The dry run was refused, but what differs is known: the
				// drift is reported with the apiserver's reason.
				out[i].Status, out[i].Fields, out[i].Error = drift.Drifted, fields, err.Error()
			case err != nil:
				out[i].Status, out[i].Error = drift.Error, err.Error()
			case len(fields) > 0:
				out[i].Status, out[i].Fields = drift.Drifted, fields
			default:
				out[i].Status = drift.InSync
			}
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// readByList resolves each desired resource (nil: skipped) and reads those
// it can, read taking one kind and namespace, parallel groups at a time.
// targets[i] is nil for a resource not resolved, errs[i] why it could not be
// resolved or read; lives[i] is nil for an object not found.
func (r *Runtime) readByList(ctx context.Context, desired []*engine.Resource, parallel int,
	read func(ctx context.Context, k listKey, idx []int, targets []*target, lives []*unstructured.Unstructured, errs []error),
) (targets []*target, lives []*unstructured.Unstructured, errs []error) {
	targets = make([]*target, len(desired))
	lives = make([]*unstructured.Unstructured, len(desired))
	errs = make([]error, len(desired))
	groups := map[listKey][]int{}
	for i, res := range desired {
		if res == nil {
			continue
		}
		t, gvr, err := r.driftTarget(res)
		if err != nil {
			errs[i] = err
			continue
		}
		targets[i] = t
		k := listKey{gvr, t.ns}
		groups[k] = append(groups[k], i)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for k, idx := range groups {
		g.Go(func() error {
			read(gctx, k, idx, targets, lives, errs)
			return nil
		})
	}
	_ = g.Wait()
	return targets, lives, errs
}

// listKey is one list call: a resource type in a namespace ("" for cluster-scoped).
type listKey struct {
	gvr schema.GroupVersionResource
	ns  string
}

// driftTarget resolves res; a kind the cluster does not serve is an error here
// (the resource was applied, so its CRD was deleted since).
func (r *Runtime) driftTarget(res *engine.Resource) (*target, schema.GroupVersionResource, error) {
	t, err := r.resolve(res)
	if err != nil {
		return nil, schema.GroupVersionResource{}, prefix("read", err)
	}
	if !t.known {
		return nil, schema.GroupVersionResource{}, fmt.Errorf("read %s: kind %s is not served by the cluster (its CRD deleted?)", t.id, t.gvk)
	}
	m, err := r.mapping(t.gvk)
	if err != nil {
		return nil, schema.GroupVersionResource{}, fmt.Errorf("read %s: discover %s: %w", t.id, t.gvk, err)
	}
	return t, m.Resource, nil
}

// readGroup reads the objects idx of one kind and namespace: one GET for a
// single object, else a paged list of the namespace, picked by name. A failed
// list is every object's error (RBAC that forbids listing forbids the check).
func (r *Runtime) readGroup(ctx context.Context, k listKey, idx []int, targets []*target, lives []*unstructured.Unstructured, errs []error) {
	if len(idx) == 1 {
		t := targets[idx[0]]
		obj, err := t.ri.Get(ctx, t.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs[idx[0]] = classify("read", t.id, err)
		default:
			lives[idx[0]] = obj
		}
		return
	}
	byName, err := r.list(ctx, k)
	if err != nil {
		for _, i := range idx {
			errs[i] = classify("list", targets[i].id, err)
		}
		return
	}
	for _, i := range idx {
		lives[i] = byName[targets[i].name]
	}
}

// list reads every object of one kind in one namespace (all namespaces: ""
// for a cluster-scoped kind), a page at a time, by name.
func (r *Runtime) list(ctx context.Context, k listKey) (map[string]*unstructured.Unstructured, error) {
	ri := r.client.Resource(k.gvr)
	var lister interface {
		List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error)
	} = ri
	if k.ns != "" {
		lister = ri.Namespace(k.ns)
	}
	byName := map[string]*unstructured.Unstructured{}
	opts := metav1.ListOptions{Limit: listPage}
	for {
		list, err := lister.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for j := range list.Items {
			byName[list.Items[j].GetName()] = &list.Items[j]
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return byName, nil
		}
	}
}

// compare dry-runs desired as kumo against the cluster and diffs the result
// with live by the fields kumo would own.
func (r *Runtime) compare(ctx context.Context, t *target, desired *engine.Resource, live *unstructured.Unstructured) ([]drift.Field, error) {
	data, err := json.Marshal(applyBody(desired.Attributes, t.ns))
	if err != nil {
		return nil, fmt.Errorf("dry-run %s: %w", t.id, err)
	}
	force := true
	dry, err := t.ri.Patch(ctx, t.name, types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager: FieldManager, Force: &force, DryRun: []string{metav1.DryRunAll},
	})
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		// kumo's fields merged onto live make an object the apiserver
		// refuses: live was changed so that re-applying it fails. What
		// differs from what kumo applies is still drift, reported with the
		// refusal (empty: nothing kumo sets differs, the check is an error).
		return drift.Subset(applyBody(desired.Attributes, t.ns), live.Object), classify("dry-run", t.id, err)
	}
	if err != nil {
		return nil, classify("dry-run", t.id, err)
	}
	fields, err := drift.Kubernetes(dry.Object, live.Object, FieldManager)
	if err != nil {
		return nil, fmt.Errorf("compare %s: %w", t.id, err)
	}
	return fields, nil
}
