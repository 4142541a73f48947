package release

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
)

// ApplyResult says what is left of a node once its resource is applied.
type ApplyResult struct {
	// Wait: the node is done only once the resource is healthy (see Wait),
	// within Timeout.
	Wait    bool
	Timeout time.Duration
	// Health is the applied object's health as the apply returned it.
	Health health.Result
}

// waitAfterApply decides from the applied object whether its node must wait:
// not with the "applied" policy, not for a runtime that cannot wait, and not
// when the object is already Healthy (a ConfigMap, a Secret, a Deployment whose
// spec did not change): those cost no wait at all.
//
// A CustomResourceDefinition always waits (until Established), whatever the
// policy: custom resources of its kind may only be applied after that.
func waitAfterApply(rt runtime.Runtime, live *engine.Resource, p engine.WaitPolicy) ApplyResult {
	if _, ok := rt.(runtime.Waiter); !ok || live == nil || live.Type != engine.Kubernetes ||
		(p.Mode == engine.WaitApplied && live.Attributes["kind"] != "CustomResourceDefinition") {
		return ApplyResult{Health: health.Result{Status: health.Healthy}}
	}
	h := health.Check(&unstructured.Unstructured{Object: live.Attributes})
	if h.Status == health.Healthy {
		return ApplyResult{Health: h}
	}
	return ApplyResult{Wait: true, Timeout: p.Timeout, Health: h}
}

// waitPolicy is when node in's resource res is done: its own wait policy
// and the run's (engine.WaitPolicyOf), and the kinds its workspace, as
// stored, counts as done once applied.
func (m *Manager) waitPolicy(ctx context.Context, in Node, res *engine.Resource) (engine.WaitPolicy, error) {
	policy, err := engine.WaitPolicyOf(res, in.Wait, in.Timeout)
	if err != nil {
		return policy, kindf(ErrInvalid, "%s: %v", res.ID, err)
	}
	ws, err := m.storedWorkspace(ctx, in.Key.Workspace)
	if err != nil {
		return policy, err
	}
	return ws.Health.Policy(res, policy), nil
}

// pendingWait is the wait an unchanged resource's node still has in an
// apply (nil: none): its live object is not healthy, as waitAfterApply
// judges an applied one. An apply that ended before the resource was healthy
// (a timeout, a failed run) therefore does not turn into a success on the
// next apply that changes nothing.
func (m *Manager) pendingWait(ctx context.Context, in Node, res, live *engine.Resource) (*engine.PendingWait, error) {
	if res == nil || live == nil {
		return nil, nil
	}
	policy, err := m.waitPolicy(ctx, in, res)
	if err != nil {
		return nil, err
	}
	rt, err := m.runtime(ctx, in.Key.Workspace, res.Type, in.Settings)
	if err != nil {
		return nil, err
	}
	r := waitAfterApply(rt, live, policy)
	if !r.Wait {
		return nil, nil
	}
	return &engine.PendingWait{Health: r.Health, Timeout: r.Timeout}, nil
}

// Wait follows one applied resource until it is Healthy (or Suspended), and
// returns that health; progress sees each change on the way. since is when
// the node's wait first began: a wait resumed after a crash passes the first
// attempt's start, so the resource's timeout still counts from there.
//
// A resource that turns Degraded, or is still not healthy when its timeout
// passes, fails the node with an ErrResourceFailed naming the resource, its
// last health and message ("apps/v1:Deployment:shop:web: Progressing for
// 5m0s: 1/3 replicas available").
func (m *Manager) Wait(ctx context.Context, in Node, since time.Time, progress func(health.Result)) (health.Result, error) {
	ctx = oneStep(ctx)
	_, res, err := m.desired(ctx, in)
	if err != nil {
		return health.Result{}, err
	}
	policy, err := m.waitPolicy(ctx, in, res)
	if err != nil {
		return health.Result{}, err
	}
	rt, err := m.runtime(ctx, in.Key.Workspace, res.Type, in.Settings)
	if err != nil {
		return health.Result{}, err
	}
	w, ok := rt.(runtime.Waiter)
	if !ok {
		return health.Result{Status: health.Healthy}, nil
	}
	// The applied object names where it went (a defaulted namespace included).
	target, err := m.recorded(ctx, in, in.ID)
	if err != nil {
		return health.Result{}, err
	}
	if target == nil {
		target = res
	}
	h, err := w.WaitHealthy(ctx, target, runtime.WaitOptions{Timeout: policy.Timeout, Since: since, Progress: progress})
	return h, nodeError(err)
}

// WaitAll follows several applied resources at once, each as Wait follows
// one, all from since, and returns each one's health and failure (nil, or an
// ErrResourceFailed / ErrInvalid of its own) once every wait has ended;
// progress sees each change of the k-th resource's health. Any other failure
// (the cluster cannot be reached, the backend fails) is not the resource's:
// it stops the other waits and is returned, and waiting again with the same
// since goes on where this ended.
func (m *Manager) WaitAll(ctx context.Context, nodes []Node, since time.Time, progress func(k int, h health.Result)) ([]health.Result, []error, error) {
	ctx, cancel := context.WithCancelCause(oneStep(ctx))
	defer cancel(nil)
	healths, errs := make([]health.Result, len(nodes)), make([]error, len(nodes))
	var wg sync.WaitGroup
	for k, n := range nodes {
		wg.Go(func() {
			healths[k], errs[k] = m.Wait(ctx, n, since, func(h health.Result) { progress(k, h) })
			if errs[k] != nil && !isResourcesOwn(errs[k]) {
				cancel(errs[k])
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, nil, err
	}
	return healths, errs, nil
}

// isResourcesOwn reports whether a wait's failure is its resource's own.
func isResourcesOwn(err error) bool {
	return errors.Is(err, ErrResourceFailed) || errors.Is(err, ErrInvalid)
}
