package kubernetes

import (
	"context"
	"encoding/base64"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kumoproj/kumo/engine/drift"
)

// configMapMaxSize is the apiserver's bound on a ConfigMap's data and
// binaryData together (keys included): a larger one is refused.
const configMapMaxSize = 1 << 20

var configMapKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// planLocally returns what a forced server-side apply of body (applyBody of
// the desired object) onto live would store, without a dry-run, when that is
// sure, and false otherwise (dry-run it). It is sure only for a change the
// apiserver stores as sent:
//   - a core ConfigMap, not immutable, whose apply only gives new values to
//     keys of data and binaryData kumo already owns (drift.ApplyOnlyNewValues:
//     no field added, dropped or taken from another manager, nothing else
//     changed, metadata included), with string values, binaryData valid
//     base64 and the whole within the apiserver's size bound — a ConfigMap
//     has no defaults and no other validation a new value can fail;
//   - no admission webhook or policy of the cluster may see the update
//     (admissionMayChange): one that could mutate or refuse it leaves the
//     answer to the apiserver;
//   - and kumo may patch ConfigMaps in the object's namespace (mayPatch): a
//     dry-run would be refused otherwise, and so the preview still is.
//
// mayPlan answers the last two for t (the caller asks the cluster once for
// the run's objects).
func planLocally(t *target, body map[string]any, live *unstructured.Unstructured, mayPlan func(*target) bool) (map[string]any, bool) {
	if t.gvk != configMapKind {
		return nil, false
	}
	if immutable, _ := live.Object["immutable"].(bool); immutable {
		return nil, false
	}
	planned, ok := drift.ApplyOnlyNewValues(body, live.Object, FieldManager)
	if !ok || !sameOutside(planned, live.Object, "data", "binaryData") || !validConfigMapData(planned) {
		return nil, false
	}
	if !mayPlan(t) {
		return nil, false
	}
	return planned, true
}

// sameOutside reports whether a and b are equal but for their fields skip.
func sameOutside(a, b map[string]any, skip ...string) bool {
	strip := func(m map[string]any) map[string]any {
		out := maps.Clone(m)
		for _, k := range skip {
			delete(out, k)
		}
		return out
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// validConfigMapData reports whether cm's data values are strings and its
// binaryData values base64, together within configMapMaxSize (as the
// apiserver's validation counts: keys and decoded values).
func validConfigMapData(cm map[string]any) bool {
	size := 0
	if data, ok := cm["data"]; ok && data != nil {
		m, ok := data.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return false
			}
			size += len(k) + len(s)
		}
	}
	if data, ok := cm["binaryData"]; ok && data != nil {
		m, ok := data.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return false
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return false
			}
			size += len(k) + len(b)
		}
	}
	return size <= configMapMaxSize
}

// admissionKinds are the objects that make the apiserver call out or
// evaluate a policy on a write: mutating ones change what is stored,
// validating ones may refuse it.
var admissionKinds = []schema.GroupKind{
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"},
}

// admissionMayChange reports whether an admission webhook or policy of the
// cluster may see an UPDATE of resource (of API group group): one whose
// rules could match it, read conservatively (a wildcard, a rule of the
// resource's subresources, a policy without match constraints, one whose
// shape is not understood all match; selectors and bindings are not looked
// at). When the objects cannot be listed (RBAC forbids it, discovery fails)
// the answer is true: not known. With a snapshot, each kind is listed once
// for it.
func (r *Runtime) admissionMayChange(ctx context.Context, snapshot, group, resource string) bool {
	// The kinds are listed side by side: one after another, they were four
	// round trips in a row before the first change of a preview was planned.
	mayChange := make([]bool, len(admissionKinds))
	var wg sync.WaitGroup
	for i, gk := range admissionKinds {
		wg.Go(func() { mayChange[i] = r.admissionOfKindMayChange(ctx, snapshot, gk, group, resource) })
	}
	wg.Wait()
	return slices.Contains(mayChange, true)
}

// admissionOfKindMayChange is admissionMayChange for the objects of one of
// admissionKinds.
func (r *Runtime) admissionOfKindMayChange(ctx context.Context, snapshot string, gk schema.GroupKind, group, resource string) bool {
	m, err := r.mapper.RESTMapping(gk)
	if meta.IsNoMatchError(err) {
		return false // not served by this cluster: none exist
	}
	if err != nil {
		return true
	}
	k := listKey{gvr: m.Resource}
	var objs map[string]*unstructured.Unstructured
	if snapshot != "" {
		objs, err = r.snapshots.list(ctx, snapshot, k, r.list)
	} else {
		objs, err = r.list(ctx, k)
	}
	if err != nil {
		return true
	}
	for _, obj := range objs {
		if admissionMatches(obj.Object, group, resource) {
			return true
		}
	}
	return false
}

// admissionMatches reports whether one webhook configuration or policy
// could match an UPDATE of group/resource.
func admissionMatches(obj map[string]any, group, resource string) bool {
	var rules []any
	if hooks, ok := obj["webhooks"]; ok {
		list, ok := hooks.([]any)
		if !ok {
			return true
		}
		for _, h := range list {
			hm, ok := h.(map[string]any)
			if !ok {
				return true
			}
			rs, ok := hm["rules"].([]any)
			if !ok && hm["rules"] != nil {
				return true
			}
			rules = append(rules, rs...)
		}
	} else {
		spec, _ := obj["spec"].(map[string]any)
		mc, ok := spec["matchConstraints"].(map[string]any)
		if !ok {
			return true
		}
		rs, ok := mc["resourceRules"].([]any)
		if !ok {
			return true
		}
		rules = rs
	}
	for _, rule := range rules {
		rm, ok := rule.(map[string]any)
		if !ok {
			return true
		}
		if anyOf(rm["apiGroups"], func(g string) bool { return g == "*" || g == group }) &&
			anyOf(rm["operations"], func(op string) bool { return op == "*" || op == "UPDATE" }) &&
			anyOf(rm["resources"], func(res string) bool {
				main, _, _ := strings.Cut(res, "/")
				return main == "*" || main == resource
			}) {
			return true
		}
	}
	return false
}

// anyOf reports whether a list of strings v has one for which match holds;
// a missing or malformed list matches (read conservatively).
func anyOf(v any, match func(string) bool) bool {
	list, ok := v.([]any)
	if !ok {
		return true
	}
	return slices.ContainsFunc(list, func(e any) bool {
		s, ok := e.(string)
		return !ok || match(s)
	})
}

// selfSubjectAccessReviews is where the apiserver answers what the caller may do.
var selfSubjectAccessReviews = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}

// mayPatch reports whether the apiserver allows kumo's credentials to patch
// objects of t's kind in t's namespace (a SelfSubjectAccessReview); an error
// is a no. With a snapshot, the answer is asked once for it per kind and
// namespace.
func (r *Runtime) mayPatch(ctx context.Context, snapshot string, t *target) bool {
	k := listKey{gvr: t.gvr, ns: t.ns}
	ask := func(ctx context.Context, k listKey) (map[string]*unstructured.Unstructured, error) {
		review := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
			"spec": map[string]any{"resourceAttributes": map[string]any{
				"verb": "patch", "group": k.gvr.Group, "version": k.gvr.Version, "resource": k.gvr.Resource, "namespace": k.ns,
			}},
		}}
		out, err := r.client.Resource(selfSubjectAccessReviews).Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
		if allowed, _, _ := unstructured.NestedBool(out.Object, "status", "allowed"); allowed {
			return map[string]*unstructured.Unstructured{"allowed": out}, nil
		}
		return map[string]*unstructured.Unstructured{}, nil
	}
	// The answer is kept apart from the lists of the same kind and namespace.
	k.gvr.Resource += "#patch"
	var answer map[string]*unstructured.Unstructured
	var err error
	if snapshot != "" {
		answer, err = r.snapshots.list(ctx, snapshot, k, func(ctx context.Context, k listKey) (map[string]*unstructured.Unstructured, error) {
			k.gvr = t.gvr
			return ask(ctx, k)
		})
	} else {
		answer, err = ask(ctx, listKey{gvr: t.gvr, ns: t.ns})
	}
	return err == nil && answer["allowed"] != nil
}
