package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kumoproj/kumo/engine"
)

// floor is the machine's floor for a spec: raw server-side apply of the same
// objects from parallel goroutines with no client-side rate limiter, the
// Namespace first (everything else lives in it). A chain spec is applied one
// object after another, as its dependencies demand.
type floor struct {
	dyn      dynamic.Interface
	parallel int
}

var (
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

func newFloor(cfg *rest.Config, parallel int) (*floor, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // a negative QPS disables client-go's limiter
	dyn, err := dynamic.NewForConfig(cfg)
	return &floor{dyn: dyn, parallel: parallel}, err
}

func (f *floor) client(obj map[string]any) dynamic.ResourceInterface {
	u := unstructured.Unstructured{Object: obj}
	if u.GetKind() == "Namespace" {
		return f.dyn.Resource(namespaces)
	}
	return f.dyn.Resource(configmaps).Namespace(u.GetNamespace())
}

// apply server-side applies every resource of spec; a re-apply is the same call.
func (f *floor) apply(ctx context.Context, spec *engine.Spec, chain bool) error {
	ssa := func(obj map[string]any) error {
		u := &unstructured.Unstructured{Object: obj}
		_, err := f.client(obj).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "kumo-floor", Force: true})
		return err
	}
	if err := ssa(spec.Resources[0].Attributes); err != nil {
		return err
	}
	rest := spec.Resources[1:]
	if chain {
		for _, r := range rest {
			if err := ssa(r.Attributes); err != nil {
				return err
			}
		}
		return nil
	}
	return f.each(rest, func(r engine.Resource) error { return ssa(r.Attributes) })
}

// destroy deletes the children in parallel and then the Namespace; it returns
// how long the Namespace's own finalization took (delete call to gone). A
// chain spec's children are deleted one after another, dependents first, as
// its dependencies demand: the mirror of its apply, and what kumo's destroy
// keeps to (until 2026-11-26 the floor deleted a chain's children in
// parallel, ignoring the order, so chain-200 destroy compared kumo's 200
// ordered deletes with 20 rounds of 10 at once).
func (f *floor) destroy(ctx context.Context, spec *engine.Spec, chain bool) (nsFinalize time.Duration, _ error) {
	del := func(obj map[string]any) error {
		u := unstructured.Unstructured{Object: obj}
		err := f.client(obj).Delete(ctx, u.GetName(), metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	children := spec.Resources[1:]
	if chain {
		for i := len(children) - 1; i >= 0; i-- {
			if err := del(children[i].Attributes); err != nil {
				return 0, fmt.Errorf("%s: %w", children[i].ID, err)
			}
		}
	} else if err := f.each(children, func(r engine.Resource) error { return del(r.Attributes) }); err != nil {
		return 0, err
	}
	start := time.Now()
	ns := spec.Resources[0].Attributes
	if err := del(ns); err != nil {
		return 0, err
	}
	name := ns["metadata"].(map[string]any)["name"].(string)
	for {
		_, err := f.dyn.Resource(namespaces).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return time.Since(start), nil
		}
		if err != nil {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// each runs fn over rs from f.parallel goroutines and returns the first error.
func (f *floor) each(rs []engine.Resource, fn func(engine.Resource) error) error {
	work := make(chan engine.Resource)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range f.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				if err := fn(r); err != nil {
					once.Do(func() { first = fmt.Errorf("%s: %w", r.ID, err) })
				}
			}
		}()
	}
	for _, r := range rs {
		work <- r
	}
	close(work)
	wg.Wait()
	return first
}
