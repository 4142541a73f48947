package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kumoproj/kumo/engine"
)

// installFloor is the floor of the realistic install: raw server-side apply
// of any kind (found with discovery), and the waits an install needs.
type installFloor struct {
	dyn      dynamic.Interface
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	parallel int
}

// floorPoll is how often the floor looks whether what it waits for is done,
// and installDuration bounds each wait.
const (
	floorPoll       = 20 * time.Millisecond
	installDuration = 5 * time.Minute
)

func newInstallFloor(cfg *rest.Config, parallel int) (*installFloor, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &installFloor{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)), parallel: parallel}, nil
}

// resource is the client of u's kind, in its namespace when it has one.
func (f *installFloor) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := f.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		f.mapper.Reset() // a kind a CRD just added
		m, err = f.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return f.dyn.Resource(m.Resource).Namespace(u.GetNamespace()), nil
	}
	return f.dyn.Resource(m.Resource), nil
}

func (f *installFloor) namespace(ctx context.Context, name string) error {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	_, err := f.dyn.Resource(namespaces).Apply(ctx, name, u, metav1.ApplyOptions{FieldManager: "kumo-floor", Force: true})
	return err
}

func objects(spec *engine.Spec) (crds, rest []*unstructured.Unstructured) {
	for _, r := range spec.Resources {
		u := &unstructured.Unstructured{Object: r.Attributes}
		if u.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, u)
		} else {
			rest = append(rest, u)
		}
	}
	return crds, rest
}

// parallelDo runs fn on every object, f.parallel at a time.
func (f *installFloor) parallelDo(objs []*unstructured.Unstructured, fn func(*unstructured.Unstructured) error) error {
	sem := make(chan struct{}, f.parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, u := range objs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(u); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

func (f *installFloor) ssa(ctx context.Context, u *unstructured.Unstructured) error {
	c, err := f.resource(u)
	if err != nil {
		return err
	}
	_, err = c.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "kumo-floor", Force: true})
	return err
}

// until polls done until it says so.
func until(ctx context.Context, what string, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, installDuration)
	defer cancel()
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(floorPoll):
		}
	}
}

// install applies spec: the CRDs, waited Established, then everything else
// at once, then waits for every Deployment to be available.
func (f *installFloor) install(ctx context.Context, spec *engine.Spec) error {
	crds, rest := objects(spec)
	if err := f.parallelDo(crds, func(u *unstructured.Unstructured) error { return f.ssa(ctx, u) }); err != nil {
		return err
	}
	if err := f.waitEach(ctx, crds, "Established", func(live *unstructured.Unstructured) bool { return condition(live, "Established") }); err != nil {
		return err
	}
	if err := f.parallelDo(rest, func(u *unstructured.Unstructured) error { return f.ssa(ctx, u) }); err != nil {
		return err
	}
	var deployments []*unstructured.Unstructured
	for _, u := range rest {
		if u.GetKind() == "Deployment" {
			deployments = append(deployments, u)
		}
	}
	return f.waitEach(ctx, deployments, "available", rolledOut)
}

// waitEach polls each of objs, one after another, until done says it is
// (what it waits for, in errors).
func (f *installFloor) waitEach(ctx context.Context, objs []*unstructured.Unstructured, what string, done func(*unstructured.Unstructured) bool) error {
	for _, u := range objs {
		c, err := f.resource(u)
		if err != nil {
			return err
		}
		err = until(ctx, u.GetKind()+" "+u.GetName()+" "+what, func() (bool, error) {
			live, err := c.Get(ctx, u.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return done(live), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// uninstall deletes every object of spec but the CRDs, waits until they are
// gone, then does the same with the CRDs.
func (f *installFloor) uninstall(ctx context.Context, spec *engine.Spec) error {
	crds, rest := objects(spec)
	for _, objs := range [][]*unstructured.Unstructured{rest, crds} {
		err := f.parallelDo(objs, func(u *unstructured.Unstructured) error {
			c, err := f.resource(u)
			if err != nil {
				return err
			}
			if err := c.Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			return until(ctx, u.GetKind()+" "+u.GetName()+" gone", func() (bool, error) {
				_, err := c.Get(ctx, u.GetName(), metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return true, nil
				}
				return false, err
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// condition says whether live has condition typ True.
func condition(live *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}

// rolledOut says whether a Deployment is available at its current
// generation: every replica updated and available, no old one left.
func rolledOut(live *unstructured.Unstructured) bool {
	want, found, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	observed, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
	updated, _, _ := unstructured.NestedInt64(live.Object, "status", "updatedReplicas")
	available, _, _ := unstructured.NestedInt64(live.Object, "status", "availableReplicas")
	total, _, _ := unstructured.NestedInt64(live.Object, "status", "replicas")
	return observed >= live.GetGeneration() && updated == want && available == want && total == want
}

// settlePause is how long settle lets the cluster rest once a namespace is
// empty: the controller manager's clients allow 20 requests a second in
// bursts of 30 (their defaults), and a tool's rollouts and delete spend
// that; 2 s refills them.
const settlePause = 2 * time.Second

var workloadLeftovers = []schema.GroupVersionResource{
	{Version: "v1", Resource: "pods"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
}

// settle waits until what a tool left running in ns after its delete (the
// Pods and ReplicaSets the garbage collector removes after their Deployment)
// is gone, then rests settlePause: each tool's install then starts on a
// cluster as quiet as the first one's. Without it the tool timed after
// another installs while the controllers still clean up after that one, and
// pays for it (measured: the floor's install took 2.6 s timed after kumo's,
// 1.5–1.8 s timed first).
func (f *installFloor) settle(ctx context.Context, ns string) error {
	for _, gvr := range workloadLeftovers {
		err := until(ctx, gvr.Resource+" of "+ns+" gone", func() (bool, error) {
			list, err := f.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			return err == nil && len(list.Items) == 0, err
		})
		if err != nil {
			return err
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(settlePause):
		return nil
	}
}
