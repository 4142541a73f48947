package release

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kumoproj/kumo/backend"
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
//
// The run's release records the object as the wait saw it healthy (see
// settledEntry), so the next run does not find its record stale.
func (m *Manager) Wait(ctx context.Context, in Node, since time.Time, progress func(health.Result)) (health.Result, error) {
	ctx = oneStep(ctx)
	h, settled, err := m.wait(ctx, in, since, progress)
	if err != nil || settled == nil {
		return h, err
	}
	if err := m.Record(ctx, in.Key, *settled); err != nil {
		return h, fmt.Errorf("record %s as healthy: %w", in.ID, err)
	}
	return h, nil
}

// wait is Wait without the record: it returns the entry to record (nil:
// none).
func (m *Manager) wait(ctx context.Context, in Node, since time.Time, progress func(health.Result)) (health.Result, *backend.StateEntry, error) {
	_, res, err := m.desired(ctx, in)
	if err != nil {
		return health.Result{}, nil, err
	}
	policy, err := m.waitPolicy(ctx, in, res)
	if err != nil {
		return health.Result{}, nil, err
	}
	rt, err := m.runtime(ctx, in.Key.Workspace, res.Type, in.Settings)
	if err != nil {
		return health.Result{}, nil, err
	}
	w, ok := rt.(runtime.Waiter)
	if !ok {
		return health.Result{Status: health.Healthy}, nil, nil
	}
	// The applied object names where it went (a defaulted namespace included).
	recorded, err := m.recorded(ctx, in, in.ID)
	if err != nil {
		return health.Result{}, nil, err
	}
	target := recorded
	if target == nil {
		target = res
	}
	var live *engine.Resource
	h, err := w.WaitHealthy(ctx, target, runtime.WaitOptions{Timeout: policy.Timeout, Since: since, Progress: progress,
		Settled: func(r *engine.Resource) { live = r }})
	if err != nil {
		return h, nil, nodeError(err)
	}
	return h, settledEntry(in, recorded, live), nil
}

// settledEntry is the state entry that records live, the object a wait saw
// healthy, for node in whose release records it as recorded; nil when there
// is nothing to record (no release, no record of it, nothing seen) or the
// record is already live. A Deployment or a CustomResourceDefinition
// recorded as applied changes its status (and resourceVersion) while it is
// waited for: without this, the next run's preview finds every such record
// stale and refreshes it (RefreshResources) before it can finish, a no-op
// run included. What it records is what that refresh would: the live object,
// with the dependencies the release records for it.
func settledEntry(in Node, recorded, live *engine.Resource) *backend.StateEntry {
	if in.Key.Revision == 0 || recorded == nil || live == nil {
		return nil
	}
	live.DependsOn = recorded.DependsOn
	if sameRecord(live, recorded) {
		return nil
	}
	return &backend.StateEntry{ID: in.ID, Resource: live}
}

// WaitAll follows several applied resources at once, each as Wait follows
// one, all from since, and returns each one's health and failure (nil, or an
// ErrResourceFailed / ErrInvalid of its own) once every wait has ended;
// progress sees each change of the k-th resource's health. Any other failure
// (the cluster cannot be reached, the backend fails) is not the resource's:
// it stops the other waits and is returned, and waiting again with the same
// since goes on where this ended. The objects seen healthy are recorded as
// Wait records one, in one write once every wait has ended.
func (m *Manager) WaitAll(ctx context.Context, nodes []Node, since time.Time, progress func(k int, h health.Result)) ([]health.Result, []error, error) {
	ctx, cancel := context.WithCancelCause(oneStep(ctx))
	defer cancel(nil)
	healths, errs := make([]health.Result, len(nodes)), make([]error, len(nodes))
	settled := make([]*backend.StateEntry, len(nodes))
	var wg sync.WaitGroup
	for k, n := range nodes {
		wg.Go(func() {
			healths[k], settled[k], errs[k] = m.wait(ctx, n, since, func(h health.Result) { progress(k, h) })
			if errs[k] != nil && !isResourcesOwn(errs[k]) {
				cancel(errs[k])
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, nil, err
	}
	// One write per release (a batch's nodes are of their run's release).
	record := map[backend.ReleaseKey][]backend.StateEntry{}
	for k, e := range settled {
		if e != nil {
			record[nodes[k].Key] = append(record[nodes[k].Key], *e)
		}
	}
	for key, entries := range record {
		if err := m.RecordBatch(ctx, key, entries); err != nil {
			return nil, nil, fmt.Errorf("record %d resources of %s as healthy: %w", len(entries), key, err)
		}
	}
	return healths, errs, nil
}

// isResourcesOwn reports whether a wait's failure is its resource's own.
func isResourcesOwn(err error) bool {
	return errors.Is(err, ErrResourceFailed) || errors.Is(err, ErrInvalid)
}
