package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// newRESTClient builds the REST client a dynamic client runs on, as
// dynamic.NewForConfig does, so that Delete can read the DELETE's response
// (the dynamic client drops it). Requests name absolute paths.
func newRESTClient(rc *rest.Config) (*rest.RESTClient, error) {
	cfg := dynamic.ConfigFor(rc)
	cfg.GroupVersion = nil
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return rest.UnversionedRESTClientForConfigAndClient(cfg, hc)
}

// Delete deletes the object with background propagation (the object goes at once;
// the garbage collector removes its dependents afterwards, as kubectl does) and
// waits until it is gone: past its finalizers, for a Namespace until its content
// is removed. It gives up after Config.DeleteTimeout, naming what holds the
// object. An absent object, or one whose kind the cluster no longer serves, is
// success.
//
// Every DELETE carries a UID precondition, so that it removes the object it
// means and never a newer one of the same name that someone created after it
// (a retried request included). The UID is the one res records
// (metadata.uid, as the object was when kumo applied or read it): then one
// request does it. When res records none (a resource taken from a spec), or
// the object of that name has another UID (the recorded one was deleted and
// the name taken again since), the object is read first and its UID used, as
// for a resource with no record: what kumo's state names is the object of that
// name, and deleting it is what a destroy asks for.
//
// An object the apiserver removes at once is gone when the DELETE returns:
// its answer is then a Status, not the object, and nothing is read
// afterwards. One that stays (finalizers, a Namespace's content, a graceful
// deletion) is read until it is gone.
func (r *Runtime) Delete(ctx context.Context, res *engine.Resource) error {
	wait, err := r.StartDelete(ctx, res)
	if err != nil || wait == nil {
		return err
	}
	return wait(ctx)
}

var _ runtime.DeleteStarter = (*Runtime)(nil)

// StartDelete is Delete up to its wait, which it returns when the object is
// not gone yet (see runtime.DeleteStarter).
func (r *Runtime) StartDelete(ctx context.Context, res *engine.Resource) (wait func(context.Context) error, _ error) {
	if err := runtime.Interrupted(ctx, "delete", res.ID); err != nil {
		return nil, err
	}
	if rt, err := r.forResource(res); err != nil || rt != r {
		if err != nil {
			return nil, prefix("delete", err)
		}
		return rt.StartDelete(ctx, res)
	}
	t, err := r.resolve(res)
	if err != nil {
		return nil, prefix("delete", err)
	}
	if !t.known {
		return nil, nil
	}
	waitFor := func(uid types.UID) func(context.Context) error {
		return func(ctx context.Context) error { return r.waitGone(ctx, t, uid) }
	}
	if uid := (&unstructured.Unstructured{Object: res.Attributes}).GetUID(); uid != "" {
		gone, err := r.deleteUID(ctx, t, uid)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case apierrors.IsConflict(err):
			// Another object has the name now: read it, below.
		case err != nil:
			return nil, classify("delete", t.id, err)
		case gone:
			return nil, nil
		default:
			return waitFor(uid), nil
		}
	}
	live, err := t.ri.Get(ctx, t.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, classify("delete", t.id, err)
	}
	uid := live.GetUID()
	gone, err := r.deleteUID(ctx, t, uid)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsConflict(err): // UID mismatch: the object we saw is gone already
		return nil, nil
	case err != nil:
		return nil, classify("delete", t.id, err)
	case gone:
		return nil, nil
	}
	return waitFor(uid), nil
}

// deleteUID deletes t's object if its UID is uid and reports whether it is
// gone when the call returns. The apiserver answers a delete it completed at
// once with a Status naming the UID it removed; one that is not complete yet
// (finalizers to run, a graceful deletion, a Namespace) with the object as it
// stays meanwhile. A kind whose storage answers every delete with the object
// is read until gone, like one with finalizers.
func (r *Runtime) deleteUID(ctx context.Context, t *target, uid types.UID) (gone bool, _ error) {
	policy := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{
		PropagationPolicy: &policy,
		Preconditions:     &metav1.Preconditions{UID: &uid},
	}
	result := r.rest.Delete().
		AbsPath(urlSegments(t)...).
		SetHeader("Accept", "application/json").
		Body(&opts).
		Do(ctx)
	if err := result.Error(); err != nil {
		return false, err
	}
	body, err := result.Raw()
	if err != nil {
		return false, err
	}
	var answer struct {
		Kind    string `json:"kind"`
		Status  string `json:"status"`
		Details *struct {
			UID types.UID `json:"uid"`
		} `json:"details"`
	}
	if json.Unmarshal(body, &answer) != nil {
		return false, nil // unsure: read until gone
	}
	return answer.Kind == "Status" && answer.Status == metav1.StatusSuccess &&
		answer.Details != nil && answer.Details.UID == uid, nil
}

// urlSegments is the path of t's object, as the dynamic client builds it.
func urlSegments(t *target) []string {
	url := []string{"api"}
	if t.gvr.Group != "" {
		url = []string{"apis", t.gvr.Group}
	}
	url = append(url, t.gvr.Version)
	if t.ns != "" {
		url = append(url, "namespaces", t.ns)
	}
	return append(url, t.gvr.Resource, t.name)
}

// waitGone returns once t's object of uid is gone (or the name holds another
// object, created since), giving up after the runtime's delete timeout. It
// watches the object, so it returns as the apiserver removes it (a CRD, a
// Namespace, an object past its finalizers) rather than at a poll; where the
// watch cannot be had (the credentials may read and delete the object but not
// list or watch its kind) it polls.
func (r *Runtime) waitGone(ctx context.Context, t *target, uid types.UID) error {
	deadline := time.Now().Add(r.deleteTimeout)
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	objects := make(chan map[string]*unstructured.Unstructured)
	errc := make(chan error, 1)
	go follow(watchCtx, t.ri, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", t.name).String()}, objects, errc)
	timeout := time.NewTimer(time.Until(deadline))
	defer timeout.Stop()
	var last *unstructured.Unstructured
	for {
		select {
		case items := <-objects:
			obj := items[t.name]
			if obj == nil || obj.GetUID() != uid {
				return nil
			}
			last = obj
		case <-errc:
			stop()
			return r.pollGone(ctx, t, uid, deadline)
		case <-timeout.C:
			if last == nil {
				return fmt.Errorf("delete %s: not seen gone within %v: listing and watching its kind kept failing", t.id, r.deleteTimeout)
			}
			return fmt.Errorf("delete %s: still present after %v%s", t.id, r.deleteTimeout, holders(last))
		case <-ctx.Done():
			return fmt.Errorf("delete %s: %w", t.id, ctx.Err())
		}
	}
}

// pollGone is waitGone by reading the object until it is gone or deadline.
func (r *Runtime) pollGone(ctx context.Context, t *target, uid types.UID, deadline time.Time) error {
	wait := 20 * time.Millisecond
	for {
		obj, err := t.ri.Get(ctx, t.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err == nil && obj.GetUID() != uid:
			return nil // ours is gone; this is a new object of the same name
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("delete %s: %w", t.id, ctx.Err())
		}
		// Other errors are transient as far as waiting goes: keep polling.
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("delete %s: still present after %v (last read: %w)", t.id, r.deleteTimeout, err)
			}
			return fmt.Errorf("delete %s: still present after %v%s", t.id, r.deleteTimeout, holders(obj))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("delete %s: %w", t.id, ctx.Err())
		case <-time.After(min(wait, time.Until(deadline)+time.Millisecond)):
		}
		wait = min(wait*2, r.pollPeriod)
	}
}

// holders describes why obj is still there: its phase and finalizers
// (metadata.finalizers, and spec.finalizers for Namespaces).
func holders(obj *unstructured.Unstructured) string {
	var parts []string
	if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase != "" {
		parts = append(parts, "phase "+phase)
	}
	fins := obj.GetFinalizers()
	if spec, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "finalizers"); len(spec) > 0 {
		fins = append(fins, spec...)
	}
	if len(fins) > 0 {
		parts = append(parts, fmt.Sprintf("finalizers %v", fins))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
