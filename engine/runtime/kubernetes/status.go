package kubernetes

import (
	"context"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
)

var _ runtime.StatusReader = (*Runtime)(nil)

// ownedKinds are the kinds a status tree looks for among the objects a
// resource owns: what workload controllers and most operators create.
var ownedKinds = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Version: "v1", Resource: "pods"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
}

// statusReads lists each kind in each namespace once and remembers the result.
type statusReads struct {
	r *Runtime
	// lists by resource and namespace: objects by name.
	lists map[listKey]map[string]*unstructured.Unstructured
	// owned by namespace: the objects of ownedKinds, by owner UID.
	owned map[string]map[types.UID][]*unstructured.Unstructured
}

func (s *statusReads) list(ctx context.Context, gvr schema.GroupVersionResource, ns string) (map[string]*unstructured.Unstructured, error) {
	key := listKey{gvr, ns}
	if l, ok := s.lists[key]; ok {
		return l, nil
	}
	var ri = s.r.client.Resource(gvr).Namespace(ns)
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	l := make(map[string]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		l[list.Items[i].GetName()] = &list.Items[i]
	}
	s.lists[key] = l
	return l, nil
}

// Status implements runtime.StatusReader: one list per kind and namespace of
// the resources, plus, for a tree, one list per owned kind and namespace.
func (r *Runtime) Status(ctx context.Context, resources []*engine.Resource, depth int) ([]runtime.StatusNode, error) {
	s := &statusReads{r: r, lists: map[listKey]map[string]*unstructured.Unstructured{}, owned: map[string]map[types.UID][]*unstructured.Unstructured{}}
	out := make([]runtime.StatusNode, len(resources))
	for i, res := range resources {
		out[i].ID = res.ID
		t, err := r.resolve(res)
		if err != nil {
			return nil, prefix("status", err)
		}
		if !t.known {
			out[i].Health = health.Result{Status: health.Missing, Message: "kind " + t.gvk.String() + " is not served by the cluster"}
			continue
		}
		objs, err := s.list(ctx, t.gvr, t.ns)
		if err != nil {
			return nil, classify("status", t.id, err)
		}
		obj := objs[t.name]
		out[i].Health = health.Check(obj)
		if obj != nil && depth > 0 {
			if out[i].Children, err = s.children(ctx, obj, depth); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// children are the objects owner owns (in its namespace), with theirs, down
// to depth levels.
func (s *statusReads) children(ctx context.Context, owner *unstructured.Unstructured, depth int) ([]runtime.StatusNode, error) {
	ns := owner.GetNamespace()
	if ns == "" || depth <= 0 {
		return nil, nil // cluster-scoped owners: their objects may be anywhere
	}
	byOwner, ok := s.owned[ns]
	if !ok {
		byOwner = map[types.UID][]*unstructured.Unstructured{}
		for _, gvr := range ownedKinds {
			objs, err := s.list(ctx, gvr, ns)
			if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
				continue
			}
			if err != nil {
				return nil, classify("status", owner.GetName(), err)
			}
			for _, o := range objs {
				for _, ref := range o.GetOwnerReferences() {
					byOwner[ref.UID] = append(byOwner[ref.UID], o)
				}
			}
		}
		s.owned[ns] = byOwner
	}
	kids := slices.Clone(byOwner[owner.GetUID()])
	slices.SortFunc(kids, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(a.GetKind()+"/"+a.GetName(), b.GetKind()+"/"+b.GetName())
	})
	var out []runtime.StatusNode
	for _, k := range kids {
		n := runtime.StatusNode{ID: engine.KubernetesID(k.GetAPIVersion(), k.GetKind(), k.GetNamespace(), k.GetName()), Health: health.Check(k)}
		var err error
		if n.Children, err = s.children(ctx, k, depth-1); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
