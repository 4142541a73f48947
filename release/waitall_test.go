package release_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// gatedWaiter is the memory runtime whose waits for health report
// Progressing, then end only when the test lets each end.
type gatedWaiter struct {
	*memory.Runtime
	gates
	mu     sync.Mutex
	began  []string
	cancel map[string]bool
}

func newGatedWaiter() *gatedWaiter {
	return &gatedWaiter{Runtime: memory.New(), cancel: map[string]bool{}}
}

func (g *gatedWaiter) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return g, nil
}

func (g *gatedWaiter) WaitHealthy(ctx context.Context, r *engine.Resource, opts runtime.WaitOptions) (health.Result, error) {
	g.mu.Lock()
	g.began = append(g.began, r.ID)
	g.mu.Unlock()
	opts.Progress(health.Result{Status: health.Progressing, Message: "0/1 replicas available"})
	select {
	case err := <-g.gate(r.ID):
		if err != nil {
			return health.Result{}, err
		}
		return health.Result{Status: health.Healthy}, nil
	case <-ctx.Done():
		g.mu.Lock()
		g.cancel[r.ID] = true
		g.mu.Unlock()
		return health.Result{}, ctx.Err()
	}
}

func (g *gatedWaiter) begun() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Sorted(slices.Values(g.began))
}

// waitingFor begins a release of n ConfigMaps on g and returns the Manager,
// the resources' IDs and their nodes.
func waitingFor(t *testing.T, b backend.Backend, g *gatedWaiter, n int) (*release.Manager, []string, []release.Node) {
	t.Helper()
	m := release.New(b, g, &runs{})
	ids, nodes := startedConfigMaps(t, b, m, "w", n)
	return m, ids, nodes
}

// awaitBegun waits until the waits of ids all began.
func awaitBegun(t *testing.T, g *gatedWaiter, ids []string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !slices.Equal(g.begun(), ids); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waits begun: %v, want all of %v at once", g.begun(), ids)
		}
	}
}

// TestWaitAllWaitsTogetherAndFailsEachAlone: every wait begins at once, a
// resource that turns Degraded fails alone while the others go on, and the
// result comes once the last is healthy, with every change of health seen.
func TestWaitAllWaitsTogetherAndFailsEachAlone(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		g := newGatedWaiter()
		m, ids, nodes := waitingFor(t, b, g, 3)
		var mu sync.Mutex
		seen := map[int][]health.Status{}
		type result struct {
			healths []health.Result
			errs    []error
			err     error
		}
		res := make(chan result, 1)
		go func() {
			hs, errs, err := m.WaitAll(ctx, nodes, time.Now(), func(k int, h health.Result) {
				mu.Lock()
				seen[k] = append(seen[k], h.Status)
				mu.Unlock()
			})
			res <- result{hs, errs, err}
		}()
		awaitBegun(t, g, ids)
		degraded := runtime.Permanent(&runtime.HealthError{ID: ids[1], Health: health.Result{Status: health.Degraded, Message: "ImagePullBackOff"}})
		g.gate(ids[1]) <- degraded
		g.gate(ids[2]) <- nil
		select {
		case r := <-res:
			t.Fatalf("WaitAll returned %v before its last wait ended", r)
		case <-time.After(50 * time.Millisecond):
		}
		g.gate(ids[0]) <- nil
		r := <-res
		if r.err != nil {
			t.Fatalf("WaitAll: %v, want each failure in its own place", r.err)
		}
		if r.errs[0] != nil || r.errs[2] != nil || r.healths[0].Status != health.Healthy || r.healths[2].Status != health.Healthy {
			t.Errorf("healthy resources: %v, %v", r.healths, r.errs)
		}
		if !errors.Is(r.errs[1], release.ErrResourceFailed) || !strings.Contains(r.errs[1].Error(), "ImagePullBackOff") {
			t.Errorf("degraded resource's failure = %v, want an ErrResourceFailed naming its health", r.errs[1])
		}
		for k := range ids {
			if !slices.Equal(seen[k], []health.Status{health.Progressing}) {
				t.Errorf("progress of %s = %v", ids[k], seen[k])
			}
		}
	})
}

// TestWaitAllStopsOnAFailureNotAResources: a failure that is not the
// resource's own (the cluster cannot be reached) stops the other waits and
// is WaitAll's error, for the caller to retry.
func TestWaitAllStopsOnAFailureNotAResources(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		g := newGatedWaiter()
		m, ids, nodes := waitingFor(t, b, g, 3)
		res := make(chan error, 1)
		go func() {
			_, _, err := m.WaitAll(ctx, nodes, time.Now(), func(int, health.Result) {})
			res <- err
		}()
		awaitBegun(t, g, ids)
		unreachable := errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
		g.gate(ids[0]) <- unreachable
		select {
		case err := <-res:
			if !errors.Is(err, unreachable) {
				t.Errorf("WaitAll error %v, want %v", err, unreachable)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("WaitAll still waits for the others after a failure that is not theirs")
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.cancel[ids[1]] || !g.cancel[ids[2]] {
			t.Errorf("waits stopped: %v, want the other two", g.cancel)
		}
	})
}
