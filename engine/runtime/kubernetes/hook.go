package kubernetes

// This file creates hooks (engine.Hook): objects created, waited for until
// they complete and deleted again, never server-side applied or recorded.

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
)

var _ runtime.HookRunner = (*Runtime)(nil)

// CreateHook creates hook (a POST, as Helm and Argo CD create hooks, so
// metadata.generateName works) labelled runtime.HookRunLabel=run, and
// returns it as created, with its name. If an object labelled with the same
// run is there already (a retried step), that one is returned, not a
// second. An object of the same name from elsewhere is an AlreadyExists
// error naming it: the caller deletes it first when the hook's policy says
// BeforeHookCreation.
func (r *Runtime) CreateHook(ctx context.Context, hook *engine.Resource, run string) (*engine.Resource, error) {
	if err := runtime.Interrupted(ctx, "create hook", hook.ID); err != nil {
		return nil, err
	}
	given := &unstructured.Unstructured{Object: hook.Attributes}
	obj := &unstructured.Unstructured{Object: applyBody(hook.Attributes, given.GetNamespace())}
	named := obj.GetName()
	if named == "" {
		// resolve needs a name; the endpoint does not depend on it.
		obj.SetName(obj.GetGenerateName())
	}
	t, err := r.resolve(&engine.Resource{ID: hook.ID, Type: engine.Kubernetes, Attributes: obj.Object})
	if err != nil {
		return nil, prefix("create hook", err)
	}
	if !t.known {
		return nil, runtime.Permanent(&runtime.NotServedError{Op: "create hook", ID: t.id, Kind: t.gvk.String()})
	}
	if named == "" {
		obj.SetName("")
	}
	if t.ns != "" {
		obj.SetNamespace(t.ns)
	}
	list, err := t.ri.List(ctx, metav1.ListOptions{LabelSelector: labels.Set{runtime.HookRunLabel: run}.String()})
	if err != nil {
		return nil, classify("create hook", t.id, err)
	}
	for i := range list.Items {
		if o := &list.Items[i]; o.GetDeletionTimestamp() == nil && (named == "" || o.GetName() == named) {
			return hookResult(hook, o), nil
		}
	}
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[runtime.HookRunLabel] = run
	obj.SetLabels(l)
	out, err := t.ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	if apierrors.IsAlreadyExists(err) {
		return nil, runtime.Permanent(fmt.Errorf("create hook %s: %s %s exists already, left by an earlier run (its delete policy does not say BeforeHookCreation): delete it, or add BeforeHookCreation (before-hook-creation) to its delete policy", t.id, t.gvk.Kind, objectName(t.ns, named)))
	}
	if err != nil {
		return nil, classify("create hook", t.id, err)
	}
	return hookResult(hook, out), nil
}

func objectName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// hookResult is the created hook, under the ID of its real name.
func hookResult(hook *engine.Resource, obj *unstructured.Unstructured) *engine.Resource {
	res := result(hook, obj)
	if id, err := engine.KubernetesIDOf(obj.Object); err == nil {
		res.ID = id
	}
	return res
}

// WaitHookDone waits until a created hook is done: a Job complete, a Pod
// succeeded (a Pod that runs and is ready is not done yet, as Helm waits
// for it), any other kind healthy. A failed Job or Pod fails at once, with
// its health's message; so does a timeout (opts.Timeout).
func (r *Runtime) WaitHookDone(ctx context.Context, hook *engine.Resource, opts runtime.WaitOptions) (health.Result, error) {
	if hook.Attributes["kind"] != "Pod" || hook.Attributes["apiVersion"] != "v1" {
		return r.WaitHealthy(ctx, hook, opts)
	}
	t, err := r.resolve(hook)
	if err != nil {
		return health.Result{}, prefix("wait", err)
	}
	since := opts.Since
	if since.IsZero() {
		since = time.Now()
	}
	var last health.Result
	for {
		obj, err := t.ri.Get(ctx, t.name, metav1.GetOptions{})
		if err != nil {
			return last, classify("wait", t.id, err)
		}
		h := health.Check(obj)
		if h != last && opts.Progress != nil {
			opts.Progress(h)
		}
		last = h
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		switch {
		case phase == "Succeeded":
			return h, nil
		case phase == "Failed" || h.Status == health.Degraded:
			return h, runtime.Permanent(&runtime.HealthError{ID: t.id, Health: h})
		case opts.Timeout > 0 && time.Since(since) > opts.Timeout:
			return h, runtime.Permanent(&runtime.HealthError{ID: t.id, Health: h, TimedOut: true, Waited: opts.Timeout})
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("wait %s: %w", t.id, ctx.Err())
		case <-time.After(r.pollPeriod):
		}
	}
}
