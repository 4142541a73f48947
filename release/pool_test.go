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
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// poolRuntime is the memory runtime whose applies count how many go at
// once, and whose apply of one resource (slow) waits until the test lets it.
type poolRuntime struct {
	*memory.Runtime
	slow    string
	release chan struct{}

	mu           sync.Mutex
	going, most  int
	appliedWhile []string // applied before slow's apply was over
	slowDone     bool
}

func (p *poolRuntime) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return p, nil
}

func (p *poolRuntime) Apply(ctx context.Context, desired *engine.Resource, opts runtime.ApplyOptions) (*engine.Resource, error) {
	p.mu.Lock()
	p.going++
	p.most = max(p.most, p.going)
	p.mu.Unlock()
	if desired.ID == p.slow {
		<-p.release
	} else {
		time.Sleep(2 * time.Millisecond)
	}
	out, err := p.Runtime.Apply(ctx, desired, opts)
	p.mu.Lock()
	p.going--
	if desired.ID == p.slow {
		p.slowDone = true
	} else if !p.slowDone && err == nil {
		p.appliedWhile = append(p.appliedWhile, desired.ID)
	}
	p.mu.Unlock()
	return out, err
}

// TestPool: a pool applies its nodes with up to parallel of them going at
// once, a free worker taking the next node while another waits on a slow
// one; it returns their outcomes in order, all recorded, and tells flushed
// the recorded outcomes in order. A failed node ends it with the outcomes
// before it; a cancelled pool starts nothing.
func TestPool(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rt := &poolRuntime{Runtime: memory.New(), release: make(chan struct{})}
		m := release.New(b, rt, &runs{})
		ids, nodes := startedConfigMaps(t, b, m, "x", 40)
		rt.slow = ids[0]
		go func() {
			// The slow apply ends once the other worker applied everything else.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				rt.mu.Lock()
				n := len(rt.appliedWhile)
				rt.mu.Unlock()
				if n == 10 {
					break
				}
			}
			close(rt.release)
		}()
		var mu sync.Mutex
		var flushes [][]release.Outcome
		out, err := m.Pool(ctx, nodes[:11], nil, func(o []release.Outcome) {
			mu.Lock()
			defer mu.Unlock()
			flushes = append(flushes, slices.Clone(o))
		}, 2)
		if err != nil || !slices.Equal(outcomeIDs(out), ids[:11]) {
			t.Fatalf("Pool = %v, %v; want the outcomes of %v in order", outcomeIDs(out), err, ids[:11])
		}
		if got := rt.appliedWhile; !slices.Equal(got, ids[1:11]) {
			t.Fatalf("applied while the first waited: %v, want the ten others, in order", got)
		}
		if last := flushes[len(flushes)-1]; !slices.Equal(outcomeIDs(last), ids[:11]) {
			t.Fatalf("last flush %v, want all eleven in order", outcomeIDs(last))
		}
		for _, f := range flushes {
			if !slices.Equal(outcomeIDs(f), ids[:len(f)]) {
				t.Fatalf("flush %v is not the first outcomes in order", outcomeIDs(f))
			}
		}
		checkRecorded(t, b, nodes[0].Key, configMaps(ids[:11])...)

		// Many nodes: at most parallel going at once, and more than one.
		rt.most = 0
		if out, err := m.Pool(ctx, nodes[11:35], nil, nil, 4); err != nil || len(out) != 24 {
			t.Fatalf("Pool of 24 = %d outcomes, %v", len(out), err)
		}
		if rt.most > 4 || rt.most < 2 {
			t.Fatalf("at most %d applies at once, want 2 to 4", rt.most)
		}

		// A failure: the outcomes before it, its error.
		rt.Reject(ids[37])
		out, err = m.Pool(ctx, nodes[35:], nil, nil, 3)
		if !errors.Is(err, release.ErrResourceFailed) || !slices.Equal(outcomeIDs(out), ids[35:37]) {
			t.Fatalf("Pool with a rejected node = %v, %v; want %v and its failure", outcomeIDs(out), err, ids[35:37])
		}

		// Cancelled: nothing starts.
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		before := len(rt.Applied())
		if out, err := m.Pool(cancelled, nodes[38:], nil, nil, 2); !errors.Is(err, release.ErrStopped) || len(out) != 0 {
			t.Fatalf("cancelled Pool = %v, %v; want no outcome and ErrStopped", out, err)
		}
		if len(rt.Applied()) != before {
			t.Fatal("a cancelled pool applied something")
		}
	})
}

// configMaps are the ConfigMaps startedConfigMaps made of ids, as applied.
func configMaps(ids []string) []engine.Resource {
	var rs []engine.Resource
	for _, id := range ids {
		rs = append(rs, cm(strings.TrimPrefix(id, "v1:ConfigMap:a:"), "1"))
	}
	return rs
}

// TestPoolDeletesWaitTogether: a pool's workers go on issuing deletes while
// the earlier ones wait to be gone; the outcomes are those before a failed
// wait, and the deletes that ended meanwhile are recorded too.
func TestPoolDeletesWaitTogether(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		h := newHeldRuntime()
		m, info, ids, dels := destroying(t, b, h, 4)
		type result struct {
			out []release.Outcome
			err error
		}
		res := make(chan result, 1)
		go func() {
			out, err := m.Pool(ctx, dels, nil, nil, 2)
			res <- result{out, err}
		}()
		h.awaitIssued(t, ids)
		h.let(ids[3], nil)
		h.let(ids[1], errors.New("delete x1: still present (finalizers [kumo.test/hold])"))
		h.let(ids[0], nil)
		h.let(ids[2], nil)
		r := <-res
		if r.err == nil || !strings.Contains(r.err.Error(), "kumo.test/hold") {
			t.Errorf("Pool error %v, want x1's wait failure", r.err)
		}
		if got := outcomeIDs(r.out); !slices.Equal(got, ids[:1]) {
			t.Fatalf("outcomes %v, want %v (those before the failure)", got, ids[:1])
		}
		entries, err := b.ListStateEntries(ctx, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{ids[0], ids[2], ids[3]} {
			if !entries[id].Deleted {
				t.Errorf("no tombstone for %s, which is gone: %v", id, entries)
			}
		}
		if _, ok := entries[ids[1]]; ok {
			t.Errorf("x1, still there, recorded: %v", entries[ids[1]])
		}
	})
}

// heldWrites is a backend whose first write of state entries waits until
// the test lets it (written) or a deadline passes.
type heldWrites struct {
	backend.Backend
	once    sync.Once
	writing chan struct{} // closed when the first write began
	written chan struct{} // closed to let it end
}

func (h *heldWrites) PutStateEntries(ctx context.Context, key backend.ReleaseKey, entries []backend.StateEntry) error {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.writing)
		select {
		case <-h.written:
		case <-time.After(5 * time.Second):
		}
	}
	return h.Backend.PutStateEntries(ctx, key, entries)
}

// TestPoolGoesOnWhileItWrites: a pool's workers go on applying nodes while
// a write of the entries kept so far is under way; the outcomes, written
// after it, are all recorded, in order.
func TestPoolGoesOnWhileItWrites(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rt := &poolRuntime{Runtime: memory.New(), release: make(chan struct{})}
		held := &heldWrites{Backend: b, writing: make(chan struct{}), written: make(chan struct{})}
		m := release.New(held, rt, &runs{})
		ids, nodes := startedConfigMaps(t, b, m, "w", 80)
		var during int
		go func() {
			<-held.writing
			before := len(rt.Applied())
			// Enough to be sure: more than the four workers' applies in
			// flight when the write began.
			for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
				if during = len(rt.Applied()) - before; during >= 12 {
					break
				}
			}
			close(held.written)
		}()
		out, err := m.Pool(ctx, nodes, nil, nil, 4)
		if err != nil || !slices.Equal(outcomeIDs(out), ids) {
			t.Fatalf("Pool = %d outcomes, %v; want all %d in order", len(out), err, len(ids))
		}
		if during < 12 {
			t.Fatalf("%d nodes applied while the first write was under way: the workers waited for it", during)
		}
		checkRecorded(t, b, nodes[0].Key, configMaps(ids)...)
	})
}

// failedWrite is a backend whose first write of state entries fails.
type failedWrite struct {
	backend.Backend
	once sync.Once
}

var errWrite = errors.New("disk full")

func (f *failedWrite) PutStateEntries(ctx context.Context, key backend.ReleaseKey, entries []backend.StateEntry) error {
	failed := false
	f.once.Do(func() { failed = true })
	if failed {
		return errWrite
	}
	return f.Backend.PutStateEntries(ctx, key, entries)
}

// TestPoolStopsWhenAWriteFails: a write that fails stops the pool before
// its next node; the entries it held are written with the rest at the end,
// so every outcome returned is recorded, and the error says why it stopped.
func TestPoolStopsWhenAWriteFails(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rt := &poolRuntime{Runtime: memory.New(), release: make(chan struct{})}
		m := release.New(&failedWrite{Backend: b}, rt, &runs{})
		ids, nodes := startedConfigMaps(t, b, m, "f", 80)
		out, err := m.Pool(ctx, nodes, nil, nil, 4)
		if !errors.Is(err, errWrite) || len(out) < 25 || len(out) == len(ids) || !slices.Equal(outcomeIDs(out), ids[:len(out)]) {
			t.Fatalf("Pool = %d outcomes, %v; want the first ones in order, more than a flush's 25 and not all, and the write's error", len(out), err)
		}
		checkRecorded(t, b, nodes[0].Key, configMaps(ids[:len(out)])...)
	})
}
