// Package kubernetes is kumo's Kubernetes runtime: it applies resources with
// server-side apply (field manager "kumo"), reads them, and deletes them waiting
// until they are gone. A resource's attributes are the whole Kubernetes object.
package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/resid"
	"github.com/kumoproj/kumo/engine/runtime"
)

// FieldManager is the server-side apply field manager kumo applies as.
const FieldManager = "kumo"

// Config selects the cluster.
type Config struct {
	// Kubeconfig is a kubeconfig file path. Empty: like kubectl, the files in
	// $KUBECONFIG (a path list), else ~/.kube/config, else the in-cluster config.
	Kubeconfig string
	// Context overrides the kubeconfig's current context.
	Context string
	// DeleteTimeout bounds how long Delete waits for an object to be gone
	// (finalizers, namespace cleanup); default 2m.
	DeleteTimeout time.Duration
	// Kubeconfigs are the other clusters a resource's kubeConfig extension may
	// name, by name or by path (the workspace's runtimes.kubernetes.kubeconfigs);
	// any other value is refused before any connection.
	Kubeconfigs map[string]string
	// AllowExecPlugins lets a kubeconfig's exec credential plugin run on this
	// machine; without it such a kubeconfig is refused when it is loaded.
	AllowExecPlugins bool
}

// Runtime implements runtime.Runtime for Kubernetes objects. It is safe for
// concurrent use.
type Runtime struct {
	kubeconfig    string // the file New loaded, "" for the default rules or NewForConfig
	client        dynamic.Interface
	rest          rest.Interface // the dynamic client's, for calls whose response it drops (Delete)
	mapper        *restmapper.DeferredDiscoveryRESTMapper
	deleteTimeout time.Duration

	mu        sync.Mutex
	mapperGen uint64 // incremented at each discovery reset
	// mappings are the kinds looked up since the last reset: the discovery
	// mapper answers each lookup by searching every group it knows again.
	mappings   map[schema.GroupVersionKind]*meta.RESTMapping
	pollPeriod time.Duration

	// namespaces seen to exist; a namespace is rarely deleted under a run, and a
	// stale entry only costs the dry-run fallback below.
	namespaces sync.Map

	// snapshots are the lists ReadLive took for its callers' snapshots.
	snapshots snapshots

	// others are the runtimes of the clusters resources name with the kubeConfig
	// extension (kubeconfig path -> *Runtime), built on first use.
	othersMu sync.Mutex
	others   map[string]*Runtime
	// kubeconfigs and allowExec are what Allow set (Config's Kubeconfigs and
	// AllowExecPlugins).
	kubeconfigs map[string]string
	allowExec   bool
}

var _ runtime.Runtime = (*Runtime)(nil)

// New connects to the cluster cfg names. It does not contact the cluster yet.
func New(cfg Config) (*Runtime, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = cfg.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: cfg.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	if !cfg.AllowExecPlugins {
		// client-go runs the plugin at the first request, not here, so
		// refusing now keeps the program from ever running.
		raw, err := cc.RawConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes runtime: load kubeconfig: %w", err)
		}
		if err := checkExec(raw, cfg.Kubeconfig, cfg.Context); err != nil {
			return nil, err
		}
	}
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes runtime: load kubeconfig: %w", err)
	}
	r, err := NewForConfig(rc, cfg.DeleteTimeout)
	if err != nil {
		return nil, err
	}
	r.kubeconfig = cfg.Kubeconfig
	r.Allow(cfg.Kubeconfigs, cfg.AllowExecPlugins)
	return r, nil
}

// checkExec refuses a kubeconfig whose user (of the context in use) has an
// exec credential plugin: a program the kubeconfig's author chose, run on
// the worker with its environment. file is the kubeconfig's path ("" for
// kubectl's default files).
func checkExec(raw clientcmdapi.Config, file, context string) error {
	if context == "" {
		context = raw.CurrentContext
	}
	c := raw.Contexts[context]
	if c == nil {
		return nil // ClientConfig reports the missing context
	}
	user := raw.AuthInfos[c.AuthInfo]
	if user == nil || user.Exec == nil {
		return nil
	}
	if file == "" {
		file = "the default kubeconfig ($KUBECONFIG, else ~/.kube/config)"
	}
	return fmt.Errorf("kubernetes runtime: kubeconfig %s: user %q runs an exec credential plugin (%q); set runtimes.kubernetes.allowExecPlugins: true in the workspace to allow it", file, c.AuthInfo, user.Exec.Command)
}

// Allow sets the clusters resources may name with the kubeConfig extension
// (name -> kubeconfig path) and whether their kubeconfigs may run exec
// credential plugins. Call it before the runtime is used.
func (r *Runtime) Allow(kubeconfigs map[string]string, execPlugins bool) {
	r.kubeconfigs, r.allowExec = kubeconfigs, execPlugins
}

// allowedKubeconfig is the kubeconfig path v, a resource's kubeConfig
// extension, stands for: a cluster name of r.kubeconfigs, one of its paths, or
// r's own kubeconfig. ok is false for anything else: a spec must not reach
// credentials the workspace did not hand it.
func (r *Runtime) allowedKubeconfig(v string) (path string, ok bool) {
	if p, ok := r.kubeconfigs[v]; ok {
		return p, true
	}
	if v == r.kubeconfig {
		return v, true
	}
	for _, p := range r.kubeconfigs {
		if p == v || filepath.Clean(p) == filepath.Clean(v) {
			return p, true
		}
	}
	return "", false
}

// forResource returns the runtime of the cluster res belongs to: r, or for a
// resource whose kubeConfig extension (engine.ExtKubeConfig, as Kusion writes
// it) names another kubeconfig file, a runtime for that file's current context,
// kept for the next resources of that cluster. One spec can so span clusters.
func (r *Runtime) forResource(res *engine.Resource) (*Runtime, error) {
	v := engine.KubeConfig(res)
	if v == "" {
		return r, nil
	}
	path, ok := r.allowedKubeconfig(v)
	if !ok {
		return nil, runtime.Permanent(fmt.Errorf("%s: extensions.%s %q is not a cluster of this workspace: list it in the workspace's runtimes.kubernetes.kubeconfigs (a name: kubeconfig path) to allow it", res.ID, engine.ExtKubeConfig, v))
	}
	if path == r.kubeconfig {
		return r, nil
	}
	r.othersMu.Lock()
	defer r.othersMu.Unlock()
	if rt, ok := r.others[path]; ok {
		return rt, nil
	}
	rt, err := New(Config{Kubeconfig: path, DeleteTimeout: r.deleteTimeout, Kubeconfigs: r.kubeconfigs, AllowExecPlugins: r.allowExec})
	if err != nil {
		return nil, runtime.Permanent(fmt.Errorf("%s: extensions.%s: %w", res.ID, engine.ExtKubeConfig, err))
	}
	if r.others == nil {
		r.others = map[string]*Runtime{}
	}
	r.others[path] = rt
	return rt, nil
}

// NewForConfig builds a Runtime from a client-go config. With QPS unset the
// client has no rate limiter of its own: client-go's default (5 requests a
// second, bursts of 10) would make the client, not the apiserver, set the pace
// of an apply, and any fixed rate caps a large one. What bounds kumo's load is
// how many calls it makes at once (a run's parallelism), and the apiserver
// queues and sheds load itself (API Priority and Fairness, on by default since
// Kubernetes 1.20); controller-runtime's config leaves the limiter out for the
// same reason (kubernetes-sigs/controller-runtime#3119). A QPS the config sets
// (with its Burst), or a RateLimiter, is kept.
func NewForConfig(rc *rest.Config, deleteTimeout time.Duration) (*Runtime, error) {
	rc = rest.CopyConfig(rc)
	if rc.QPS == 0 && rc.RateLimiter == nil {
		rc.QPS = -1
	}
	if rc.UserAgent == "" {
		rc.UserAgent = "kumo"
	}
	if deleteTimeout <= 0 {
		deleteTimeout = 2 * time.Minute
	}
	restClient, err := newRESTClient(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes runtime: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes runtime: %w", err)
	}
	return &Runtime{
		client:        dynamic.New(restClient),
		rest:          restClient,
		mapper:        restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
		deleteTimeout: deleteTimeout,
		pollPeriod:    500 * time.Millisecond,
	}, nil
}

// target is what a request needs: the object's REST endpoint and name.
type target struct {
	id    string
	gvk   schema.GroupVersionKind
	ri    dynamic.ResourceInterface
	gvr   schema.GroupVersionResource
	name  string
	ns    string // "" for cluster-scoped kinds
	known bool   // the kind is served by the cluster
}

// resolve finds res's endpoint from its attributes (apiVersion, kind,
// metadata.name/namespace), or from its ID (apiVersion:kind[:namespace]:name) when
// it has no attributes. known is false, with no error, when the cluster does not
// serve the kind (after one discovery refresh).
func (r *Runtime) resolve(res *engine.Resource) (*target, error) {
	t := &target{id: res.ID}
	obj := unstructured.Unstructured{Object: res.Attributes}
	apiVersion, kind, name, ns := obj.GetAPIVersion(), obj.GetKind(), obj.GetName(), obj.GetNamespace()
	if len(res.Attributes) == 0 {
		id, err := resid.Parse(res.ID, resid.Kubernetes)
		if err != nil {
			return nil, runtime.Permanent(fmt.Errorf("%s: not a Kubernetes resource ID (apiVersion:kind[:namespace]:name) and no attributes", res.ID))
		}
		apiVersion, kind, ns, name = id.APIVersion, id.Kind, id.Namespace, id.Name
	}
	if apiVersion == "" || kind == "" || name == "" {
		return nil, runtime.Permanent(fmt.Errorf("%s: attributes need apiVersion, kind and metadata.name", res.ID))
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, runtime.Permanent(fmt.Errorf("%s: %w", res.ID, err))
	}
	t.gvk, t.name = gv.WithKind(kind), name
	mapping, err := r.mapping(t.gvk)
	if meta.IsNoMatchError(err) {
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: discover %s: %w", res.ID, t.gvk, err)
	}
	t.known, t.gvr = true, mapping.Resource
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		t.ns = ns
		t.ri = r.client.Resource(mapping.Resource).Namespace(ns)
	} else {
		t.ri = r.client.Resource(mapping.Resource)
	}
	return t, nil
}

// mapping looks gvk up in the cached discovery; on a miss it refreshes discovery
// once (so that kinds of CRDs created since the cache was filled are found). A
// refresh made by a concurrent lookup since this one started counts as that one.
func (r *Runtime) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	r.mu.Lock()
	gen := r.mapperGen
	if m, ok := r.mappings[gvk]; ok {
		r.mu.Unlock()
		return m, nil
	}
	r.mu.Unlock()
	m, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		r.mu.Lock()
		if r.mapperGen == gen {
			r.mapper.Reset()
			r.mapperGen++
			r.mappings = nil
		}
		gen = r.mapperGen
		r.mu.Unlock()
		m, err = r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.mapperGen == gen {
		if r.mappings == nil {
			r.mappings = map[schema.GroupVersionKind]*meta.RESTMapping{}
		}
		r.mappings[gvk] = m
	}
	r.mu.Unlock()
	return m, nil
}

// Apply server-side applies desired (field manager "kumo"; conflicts with other
// managers forced only with opts.ForceConflicts, else refused naming the fields) and
// returns the object the apiserver returned, without metadata.managedFields.
//
// Server-set fields that may come along when desired was taken from a recorded
// state (metadata.resourceVersion, uid, creationTimestamp, generation,
// managedFields, selfLink, deletionTimestamp and status) are not sent: they are not
// part of the desired state, and a stale resourceVersion would fail the apply.
func (r *Runtime) Apply(ctx context.Context, desired *engine.Resource, opts runtime.ApplyOptions) (*engine.Resource, error) {
	if err := runtime.Interrupted(ctx, "apply", desired.ID); err != nil {
		return nil, err
	}
	if rt, err := r.forResource(desired); err != nil || rt != r {
		if err != nil {
			return nil, prefix("apply", err)
		}
		return rt.Apply(ctx, desired, opts)
	}
	if len(desired.Attributes) == 0 {
		return nil, runtime.Permanent(fmt.Errorf("apply %s: no attributes (the Kubernetes object)", desired.ID))
	}
	t, err := r.resolve(desired)
	if err != nil {
		return nil, prefix("apply", err)
	}
	if !t.known {
		return nil, runtime.Permanent(&runtime.NotServedError{Op: "apply", ID: t.id, Kind: t.gvk.String()})
	}
	body := applyBody(desired.Attributes, t.ns)
	data, err := json.Marshal(body)
	if err != nil {
		return nil, runtime.Permanent(fmt.Errorf("apply %s: %w", t.id, err))
	}
	force := opts.ForceConflicts
	po := metav1.PatchOptions{FieldManager: FieldManager, Force: &force}
	if opts.DryRun {
		po.DryRun = []string{metav1.DryRunAll}
	}
	asWritten := &engine.Resource{ID: desired.ID, Type: desired.Type, Attributes: body, DependsOn: desired.DependsOn, Extensions: desired.Extensions}
	if opts.DryRun && t.ns != "" {
		// Into a namespace that does not exist yet, the apiserver cannot
		// check the object (and its namespace admission waits 50 ms per
		// request before saying so): the caller knows whether an earlier
		// node of the same run creates it, and previews the object as
		// written; the real apply still goes through the apiserver's
		// validation.
		exists, err := r.namespaceExists(ctx, t.ns)
		if err != nil {
			return nil, classify("apply", t.id, err)
		}
		if !exists {
			return nil, &runtime.NamespaceMissingError{ID: t.id, Namespace: t.ns, Planned: asWritten}
		}
	}
	out, err := t.ri.Patch(ctx, t.name, types.ApplyPatchType, data, po)
	if opts.DryRun && namespaceMissing(err) {
		return nil, &runtime.NamespaceMissingError{ID: t.id, Namespace: t.ns, Planned: asWritten}
	}
	if err != nil {
		return nil, classify("apply", t.id, err)
	}
	return result(desired, out), nil
}

func (r *Runtime) namespaceExists(ctx context.Context, ns string) (bool, error) {
	if _, ok := r.namespaces.Load(ns); ok {
		return true, nil
	}
	_, err := r.client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r.namespaces.Store(ns, true)
	return true, nil
}

func namespaceMissing(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Kind == "namespaces"
}

func applyBody(attrs map[string]any, ns string) map[string]any {
	body := make(map[string]any, len(attrs))
	for k, v := range attrs {
		if k != "status" {
			body[k] = v
		}
	}
	md, _ := attrs["metadata"].(map[string]any)
	clean := make(map[string]any, len(md)+1)
	for k, v := range md {
		switch k {
		case "managedFields", "resourceVersion", "uid", "creationTimestamp",
			"generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "namespace":
		default:
			clean[k] = v
		}
	}
	if ns != "" {
		clean["namespace"] = ns
	}
	body["metadata"] = clean
	return body
}

func result(like *engine.Resource, obj *unstructured.Unstructured) *engine.Resource {
	obj.SetManagedFields(nil)
	return &engine.Resource{
		ID:         like.ID,
		Type:       like.Type,
		Attributes: obj.Object,
		DependsOn:  like.DependsOn,
		Extensions: like.Extensions,
	}
}

// Read returns the live object without metadata.managedFields. When it does not
// exist (including when the cluster no longer serves its kind) the error wraps
// runtime.ErrNotFound.
func (r *Runtime) Read(ctx context.Context, res *engine.Resource) (*engine.Resource, error) {
	return r.read(ctx, res, false)
}

// ReadManaged is Read keeping metadata.managedFields: who owns which field,
// for ignore rules that name field managers.
func (r *Runtime) ReadManaged(ctx context.Context, res *engine.Resource) (*engine.Resource, error) {
	return r.read(ctx, res, true)
}

func (r *Runtime) read(ctx context.Context, res *engine.Resource, managed bool) (*engine.Resource, error) {
	if err := runtime.Interrupted(ctx, "read", res.ID); err != nil {
		return nil, err
	}
	if rt, err := r.forResource(res); err != nil || rt != r {
		if err != nil {
			return nil, prefix("read", err)
		}
		return rt.read(ctx, res, managed)
	}
	t, err := r.resolve(res)
	if err != nil {
		return nil, prefix("read", err)
	}
	if !t.known {
		return nil, runtime.NotFound(res.ID)
	}
	out, err := t.ri.Get(ctx, t.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, runtime.NotFound(res.ID)
	}
	if err != nil {
		return nil, classify("read", t.id, err)
	}
	if managed {
		return &engine.Resource{ID: res.ID, Type: res.Type, Attributes: out.Object, DependsOn: res.DependsOn, Extensions: res.Extensions}, nil
	}
	return result(res, out), nil
}

// classify wraps an API error as "<op> <id>: <apiserver message>", marked
// runtime.Permanent unless retrying can help. Retryable: timeouts, throttling,
// 5xx, connection errors, optimistic-concurrency conflicts, a missing namespace
// (another node may be creating it) and a namespace being terminated.
func classify(op, id string, err error) error {
	if c := applyConflict(op, id, err); c != nil {
		return c
	}
	wrapped := fmt.Errorf("%s %s: %w", op, id, err)
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return wrapped // transport errors, context errors
	}
	switch {
	case apierrors.IsNotFound(err):
		if d := status.Status().Details; d != nil && d.Kind == "namespaces" {
			return wrapped
		}
		return runtime.Permanent(wrapped)
	case apierrors.IsForbidden(err):
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return wrapped
		}
		return runtime.Permanent(wrapped)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsUnauthorized(err),
		apierrors.IsAlreadyExists(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsNotAcceptable(err), apierrors.IsUnsupportedMediaType(err),
		apierrors.IsRequestEntityTooLargeError(err), schemaRejected(status):
		return runtime.Permanent(wrapped)
	}
	return wrapped
}

// schemaRejected reports the apiserver's server-side apply refusing an object
// that does not fit its kind's schema (a field not declared, a string where a
// map belongs). The apiserver answers 500 for it (kubernetes/kubernetes#139253),
// which would read as retryable, but the same object fails the same way every
// time.
func schemaRejected(status apierrors.APIStatus) bool {
	st := status.Status()
	return st.Code == http.StatusInternalServerError && strings.HasPrefix(st.Message, "failed to create typed patch object")
}

// prefix adds "<op> " to a resolve error, keeping it permanent if it was.
func prefix(op string, err error) error {
	if runtime.IsPermanent(err) {
		return runtime.Permanent(fmt.Errorf("%s %w", op, errors.Unwrap(err)))
	}
	return fmt.Errorf("%s %w", op, err)
}
