package release_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// heldRuntime is the memory runtime whose deletes are issued at once but
// over only when the test lets each go, as Kubernetes objects held by
// finalizers are (runtime.DeleteStarter).
type heldRuntime struct {
	*memory.Runtime
	gates
	mu     sync.Mutex
	issued []string
}

func newHeldRuntime() *heldRuntime {
	return &heldRuntime{Runtime: memory.New()}
}

// gates are how a test ends what waits on each resource: the channel of its
// ID.
type gates struct {
	lock  sync.Mutex
	chans map[string]chan error
}

func (g *gates) gate(id string) chan error {
	g.lock.Lock()
	defer g.lock.Unlock()
	if g.chans == nil {
		g.chans = map[string]chan error{}
	}
	if g.chans[id] == nil {
		g.chans[id] = make(chan error, 1)
	}
	return g.chans[id]
}

func (h *heldRuntime) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return h, nil
}

// let ends the wait of id's delete with err.
func (h *heldRuntime) let(id string, err error) { h.gate(id) <- err }

func (h *heldRuntime) issuedIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.issued)
}

// awaitIssued waits until the deletes of ids are all issued, none of them
// let go yet; failing, it lets every one go, so that what waits on them ends.
func (h *heldRuntime) awaitIssued(t *testing.T, ids []string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(h.issuedIDs()) < len(ids); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			for _, id := range ids {
				h.let(id, nil)
			}
			t.Fatalf("deletes issued while the first wait: %v, want all of %v", h.issuedIDs(), ids)
		}
	}
}

func (h *heldRuntime) StartDelete(ctx context.Context, res *engine.Resource) (func(context.Context) error, error) {
	if _, ok := h.Object(res.ID); !ok {
		return nil, nil
	}
	if err := h.Runtime.Delete(ctx, res); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.issued = append(h.issued, res.ID)
	h.mu.Unlock()
	gate := h.gate(res.ID)
	return func(ctx context.Context) error {
		select {
		case err := <-gate:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}, nil
}

func (h *heldRuntime) Delete(ctx context.Context, res *engine.Resource) error {
	wait, err := h.StartDelete(ctx, res)
	if err != nil || wait == nil {
		return err
	}
	return wait(ctx)
}

// TestBatchDeletesWaitTogether: a batch issues every delete while the earlier
// ones still wait, and takes their outcomes in order as each is gone; a wait
// that fails ends the batch with the outcomes before it recorded, and a retry
// goes on after them.
func TestBatchDeletesWaitTogether(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		h := newHeldRuntime()
		m, info, ids, dels := destroying(t, b, h, 4)

		type result struct {
			out []release.Outcome
			err error
		}
		batch := func(done []release.Outcome) chan result {
			res := make(chan result, 1)
			go func() {
				out, err := m.Batch(ctx, dels, done, nil)
				res <- result{out, err}
			}()
			return res
		}
		res := batch(nil)
		h.awaitIssued(t, ids)
		// Gone out of order: x3, then x1 fails (a timeout), then x0.
		h.let(ids[3], nil)
		h.let(ids[1], errors.New("delete x1: still present (finalizers [kumo.test/hold])"))
		h.let(ids[0], nil)
		r := <-res
		if r.err == nil || !strings.Contains(r.err.Error(), "kumo.test/hold") {
			t.Errorf("Batch error %v, want x1's wait failure", r.err)
		}
		if got := outcomeIDs(r.out); !slices.Equal(got, ids[:1]) {
			t.Fatalf("outcomes %v, want %v (those before the failure)", got, ids[:1])
		}
		entries, err := b.ListStateEntries(ctx, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || !entries[ids[0]].Deleted {
			t.Errorf("recorded %v, want x0's tombstone only", entries)
		}

		// The retry re-issues the rest; x2 is still going and is waited for.
		res = batch(r.out)
		h.let(ids[2], nil)
		if r = <-res; r.err != nil || !slices.Equal(outcomeIDs(r.out), ids) {
			t.Fatalf("retried Batch = %v, %v; want all of %v", outcomeIDs(r.out), r.err, ids)
		}
		entries, err = b.ListStateEntries(ctx, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if !entries[id].Deleted {
				t.Errorf("no tombstone for %s: %v", id, entries)
			}
		}
	})
}

// startedConfigMaps begins revision 1 of p/w over n ConfigMaps named
// prefix0, prefix1, ... and returns their IDs and nodes, in order.
func startedConfigMaps(t *testing.T, b backend.Backend, m *release.Manager, prefix string, n int) ([]string, []release.Node) {
	t.Helper()
	var rs []engine.Resource
	var ids []string
	for i := range n {
		rs = append(rs, cm(fmt.Sprintf("%s%d", prefix, i), "1"))
		ids = append(ids, rs[i].ID)
	}
	node := started(t, b, m, rs...)
	nodes := make([]release.Node, len(ids))
	for i, id := range ids {
		nodes[i] = node(id)
	}
	return ids, nodes
}

func outcomeIDs(out []release.Outcome) []string {
	var ids []string
	for _, o := range out {
		ids = append(ids, o.ID)
	}
	return ids
}

// destroying applies n ConfigMaps through m's runtime h, finishes that release
// and begins a destroy: its release, the resources' IDs and their delete
// nodes, in apply order.
func destroying(t *testing.T, b backend.Backend, h *heldRuntime, n int) (*release.Manager, release.Info, []string, []release.Node) {
	t.Helper()
	m := release.New(b, h, &runs{})
	ids, applies := startedConfigMaps(t, b, m, "x", n)
	if _, err := m.Batch(ctx, applies, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Finish(ctx, release.FinishInput{Key: applies[0].Key, Phase: engine.PhaseSucceeded}); err != nil {
		t.Fatal(err)
	}
	info, err := m.Begin(ctx, release.BeginInput{Project: "p", Workspace: "w", Operation: engine.OperationDestroy, WorkflowID: "kumo/p/w", RunID: "run-2"})
	if err != nil {
		t.Fatal(err)
	}
	var dels []release.Node
	for _, id := range ids {
		dels = append(dels, release.Node{Key: info.Key, PriorRevision: info.PriorRevision, ID: id, Delete: true})
	}
	return m, info, ids, dels
}

// TestChainDeletesOneAfterAnother: the deletes of a chain go in order, each
// issued only once the resource before it is gone (Batch would issue them
// all while the first waits), and each is recorded.
func TestChainDeletesOneAfterAnother(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		h := newHeldRuntime()
		m, info, ids, dels := destroying(t, b, h, 3)
		res := make(chan error, 1)
		go func() {
			_, err := m.Chain(ctx, dels, nil, nil)
			res <- err
		}()
		for k, id := range ids {
			for deadline := time.Now().Add(10 * time.Second); len(h.issuedIDs()) < k+1; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s never issued: %v", id, h.issuedIDs())
				}
			}
			time.Sleep(50 * time.Millisecond) // time enough for a next delete to be issued too early
			if got := h.issuedIDs(); !slices.Equal(got, ids[:k+1]) {
				t.Fatalf("issued %v while %s is not gone, want %v", got, id, ids[:k+1])
			}
			h.let(id, nil)
		}
		if err := <-res; err != nil {
			t.Fatal(err)
		}
		entries, err := b.ListStateEntries(ctx, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if !entries[id].Deleted {
				t.Errorf("no tombstone for %s: %v", id, entries)
			}
		}
	})
}
