package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
)

var _ runtime.Waiter = (*Runtime)(nil)

var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// podOwners are the kinds whose Pods a wait also watches: their own status
// does not show a crash loop (a Deployment stays Progressing until its
// progress deadline, ten minutes by default), their Pods' does.
var podOwners = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "ReplicaSet"}: true,
	{Group: "apps", Kind: "StatefulSet"}: true, {Group: "apps", Kind: "DaemonSet"}: true,
	{Group: "batch", Kind: "Job"}: true,
}

// WaitHealthy implements runtime.Waiter. It watches the object (a list, then a
// watch from the list's resourceVersion, re-established where it stopped, or
// after a fresh list when that version has expired) and judges each version
// with health.Check. For workloads (Deployment, ReplicaSet, StatefulSet,
// DaemonSet, Job) it also watches the Pods their selector matches: while the
// workload is Progressing, the first Degraded Pod's message is added to its
// own, and a Pod crash-looping past opts.CrashLoopRestarts fails the wait.
func (r *Runtime) WaitHealthy(ctx context.Context, res *engine.Resource, opts runtime.WaitOptions) (health.Result, error) {
	if rt, err := r.forResource(res); err != nil || rt != r {
		if err != nil {
			return health.Result{}, prefix("wait", err)
		}
		return rt.WaitHealthy(ctx, res, opts)
	}
	t, err := r.resolve(res)
	if err != nil {
		return health.Result{}, prefix("wait", err)
	}
	if !t.known {
		return health.Result{}, runtime.Permanent(fmt.Errorf("wait %s: kind %s is not served by the cluster", t.id, t.gvk))
	}
	since := opts.Since
	if since.IsZero() {
		since = time.Now()
	}
	grace := int64(opts.CrashLoopRestarts)
	if grace == 0 {
		grace = runtime.DefaultCrashLoopRestarts
	}
	var deadline time.Time
	if opts.Timeout > 0 {
		deadline = since.Add(opts.Timeout)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	waitCtx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	watchCtx, stop := context.WithCancel(waitCtx)
	defer stop()

	errc := make(chan error, 2)
	objects := make(chan map[string]*unstructured.Unstructured)
	go follow(watchCtx, t.ri, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", t.name).String()}, objects, errc)
	var (
		podUpdates chan map[string]*unstructured.Unstructured // nil until the selector is known
		obj        *unstructured.Unstructured
		pods       map[string]*unstructured.Unstructured
		last       health.Result
		seen       bool
	)
	for {
		select {
		case snap := <-objects:
			obj = snap[t.name]
			if podUpdates == nil && obj != nil && podOwners[t.gvk.GroupKind()] {
				if sel, ok := podSelector(obj); ok {
					podUpdates = make(chan map[string]*unstructured.Unstructured)
					go follow(watchCtx, r.client.Resource(podsResource).Namespace(t.ns), metav1.ListOptions{LabelSelector: sel}, podUpdates, errc)
				}
			}
		case pods = <-podUpdates:
		case err := <-errc:
			return last, classify("wait", t.id, err)
		case <-waitCtx.Done():
			if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return last, fmt.Errorf("wait %s: %w", t.id, err)
			}
			if !seen { // the deadline passed before the first list answered
				last = r.healthNow(ctx, t)
			}
			return last, runtime.Permanent(&runtime.HealthError{ID: t.id, Health: last, TimedOut: true, Waited: deadline.Sub(since)})
		}
		h, failed := assess(obj, pods, grace)
		if !seen || h != last {
			seen, last = true, h
			if opts.Progress != nil {
				opts.Progress(h)
			}
		}
		switch {
		case failed:
			return h, runtime.Permanent(&runtime.HealthError{ID: t.id, Health: h})
		case h.Status == health.Healthy, h.Status == health.Suspended:
			if opts.Settled != nil && obj != nil {
				opts.Settled(result(res, obj.DeepCopy()))
			}
			return h, nil
		}
	}
}

// healthNow reads the object once, briefly, for a timeout's message.
func (r *Runtime) healthNow(ctx context.Context, t *target) health.Result {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	obj, err := t.ri.Get(ctx, t.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return health.Check(nil)
	case err != nil:
		return health.Result{Status: health.Unknown, Message: err.Error()}
	}
	return health.Check(obj)
}

// assess is the health of obj with what its pods add; failed means the wait
// should stop: Degraded, except a crash loop still within grace restarts.
func assess(obj *unstructured.Unstructured, pods map[string]*unstructured.Unstructured, grace int64) (h health.Result, failed bool) {
	h = health.Check(obj)
	switch h.Status {
	case health.Degraded:
		if h.Reason == "CrashLoopBackOff" && obj.GetKind() == "Pod" {
			if n := crashLoopRestarts(obj); n <= grace {
				h.Status = health.Progressing
				h.Message = fmt.Sprintf("%s (%d of %d restarts tolerated)", h.Message, n, grace)
				return h, false
			}
		}
		return h, true
	case health.Progressing:
		for _, name := range slices.Sorted(maps.Keys(pods)) {
			p := health.Check(pods[name])
			if p.Status != health.Degraded {
				continue
			}
			p.Message = fmt.Sprintf("pod %s: %s", name, p.Message)
			if p.Reason == "CrashLoopBackOff" && crashLoopRestarts(pods[name]) > grace {
				return p, true
			}
			h.Message += "; " + p.Message
			if h.Reason == "" {
				h.Reason = p.Reason
			}
			break
		}
	}
	return h, false
}

// crashLoopRestarts is the highest restart count of pod's containers waiting in
// CrashLoopBackOff.
func crashLoopRestarts(pod *unstructured.Unstructured) int64 {
	var most int64
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		list, _, _ := unstructured.NestedSlice(pod.Object, "status", field)
		for _, item := range list {
			cs, _ := item.(map[string]any)
			reason, _, _ := unstructured.NestedString(cs, "state", "waiting", "reason")
			if reason != "CrashLoopBackOff" {
				continue
			}
			if n, _, _ := unstructured.NestedInt64(cs, "restartCount"); n > most {
				most = n
			}
		}
	}
	return most
}

// podSelector renders a workload's spec.selector as a label selector.
func podSelector(obj *unstructured.Unstructured) (string, bool) {
	raw, ok, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
	if !ok {
		return "", false
	}
	var ls metav1.LabelSelector
	if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return "", false
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return "", false
	}
	return sel.String(), true
}

// follow keeps out up to date with the objects opts selects: it sends the
// whole set after the first list and after every change. It lists, then
// watches from the list's resourceVersion; a watch that ends is resumed from
// the last version seen (bookmarks included), one whose version has expired
// (410 Gone) starts over with a new list. Transient errors are retried with
// back-off; an error retrying cannot fix goes to errc. It returns when ctx ends.
func follow(ctx context.Context, ri dynamic.ResourceInterface, opts metav1.ListOptions, out chan<- map[string]*unstructured.Unstructured, errc chan<- error) {
	items := map[string]*unstructured.Unstructured{}
	send := func() bool {
		select {
		case out <- maps.Clone(items):
			return true
		case <-ctx.Done():
			return false
		}
	}
	rv := ""
	backoff := newBackoff()
	for ctx.Err() == nil {
		if rv == "" {
			list, err := ri.List(ctx, opts)
			if err != nil {
				if !retry(ctx, err, backoff, errc) {
					return
				}
				continue
			}
			clear(items)
			for i := range list.Items {
				items[list.Items[i].GetName()] = &list.Items[i]
			}
			rv = list.GetResourceVersion()
			if !send() {
				return
			}
		}
		wopts := opts
		wopts.ResourceVersion, wopts.AllowWatchBookmarks = rv, true
		w, err := ri.Watch(ctx, wopts)
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				rv = ""
				continue
			}
			if !retry(ctx, err, backoff, errc) {
				return
			}
			continue
		}
		var ok bool
		rv, ok = drain(ctx, w, items, rv, send)
		w.Stop()
		if !ok {
			return
		}
		backoff.reset()
	}
}

// drain applies w's events to items until the watch ends, and returns the
// resourceVersion to resume from ("" to list again); ok is false when ctx
// ended or out is no longer read.
func drain(ctx context.Context, w watch.Interface, items map[string]*unstructured.Unstructured, rv string, send func() bool) (string, bool) {
	for {
		var ev watch.Event
		var open bool
		select {
		case <-ctx.Done():
			return rv, false
		case ev, open = <-w.ResultChan():
		}
		if !open {
			return rv, true
		}
		if ev.Type == watch.Error {
			if err := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				return "", true
			}
			return rv, true // other watch errors: resume from where we are
		}
		obj, isObj := ev.Object.(*unstructured.Unstructured)
		if !isObj {
			continue
		}
		rv = obj.GetResourceVersion()
		switch ev.Type {
		case watch.Added, watch.Modified:
			items[obj.GetName()] = obj
		case watch.Deleted:
			delete(items, obj.GetName())
		default: // Bookmark: only the version moves
			continue
		}
		if !send() {
			return rv, false
		}
	}
}

// retry waits out a transient error and reports true; a permanent one (the
// kind is gone, access denied) goes to errc and reports false.
func retry(ctx context.Context, err error, b *backoff, errc chan<- error) bool {
	if ctx.Err() != nil {
		return false
	}
	if runtime.IsPermanent(classify("watch", "", err)) {
		errc <- err
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(b.next()):
		return true
	}
}

type backoff struct{ d time.Duration }

func newBackoff() *backoff { return &backoff{d: 100 * time.Millisecond} }

func (b *backoff) next() time.Duration {
	d := b.d
	b.d = min(2*b.d, 5*time.Second)
	return d
}

func (b *backoff) reset() { b.d = 100 * time.Millisecond }
