package kubernetes

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/runtime"
)

var _ runtime.LiveReader = (*Runtime)(nil)

// readLiveParallel bounds the list calls of one ReadLive in flight.
const readLiveParallel = 10

// ReadLive reads desired objects live as Drift does: one (paged) list call per
// kind and namespace, a GET for an object alone in its kind and namespace. An
// object found is Unchanged when a server-side apply of desired as kumo would
// change nothing, judged from the object and its managedFields
// (drift.ApplyChangesNothing); when that is not sure it is not Unchanged. An
// object of another cluster (the kubeConfig extension), or of a kind the
// cluster does not serve, is an error: read it alone.
func (r *Runtime) ReadLive(ctx context.Context, desired []*engine.Resource) []runtime.Live {
	out := make([]runtime.Live, len(desired))
	targets := make([]*target, len(desired))
	groups := map[listKey][]int{}
	for i, res := range desired {
		if err := runtime.Interrupted(ctx, "read", res.ID); err != nil {
			out[i].Err = err
			continue
		}
		if rt, err := r.forResource(res); err != nil || rt != r {
			out[i].Err = fmt.Errorf("read %s: of another cluster", res.ID)
			continue
		}
		t, gvr, err := r.driftTarget(res)
		if err != nil {
			out[i].Err = err
			continue
		}
		targets[i] = t
		k := listKey{gvr, t.ns}
		groups[k] = append(groups[k], i)
	}
	lives := make([]*unstructured.Unstructured, len(desired))
	errs := make([]error, len(desired))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readLiveParallel)
	for k, idx := range groups {
		g.Go(func() error {
			r.readGroup(gctx, k, idx, targets, lives, errs)
			return nil
		})
	}
	_ = g.Wait()
	for i, t := range targets {
		switch {
		case t == nil:
		case errs[i] != nil:
			out[i].Err = errs[i]
		case lives[i] != nil:
			body := applyBody(desired[i].Attributes, t.ns)
			out[i].Unchanged = drift.ApplyChangesNothing(body, lives[i].Object, FieldManager)
			out[i].Resource = result(desired[i], lives[i])
		}
	}
	return out
}
