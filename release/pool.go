package release

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kumoproj/kumo/backend"
)

// Pool is Batch with up to parallel of its nodes' steps going at once, each
// taking the next node not started when it is free: the floor's shape (one
// queue, parallel workers), where parallel batches of a fixed share each
// end when their own slowest requests let them, the walk waiting for the
// last. What it returns is Batch's: the outcomes of its first nodes, in
// order, as far as they are all done, and the error of the node after them
// (or ErrStopped). A node after a failed one that had already started is
// seen through, and left out of the outcomes with every node after the
// failed one: a retry runs them again, as it would after a crash.
//
// The outcomes are recorded in one write per flush, as Batch's; flushed is
// called with the outcomes recorded so far, as far as they are all
// recorded. A delete waits for its resource to go on its worker. A
// cancelled ctx stops the pool before its next node, never during one.
func (m *Manager) Pool(ctx context.Context, nodes []Node, done []Outcome, flushed func([]Outcome), parallel int) ([]Outcome, error) {
	if parallel <= 1 || len(nodes)-len(done) <= 1 {
		return m.Batch(ctx, nodes, done, flushed)
	}
	ctx = oneStep(ctx)
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
		if n.Key != nodes[0].Key {
			return done, kindf(ErrInvalid, "batch: %s is of release %s, not %s", n.ID, n.Key, nodes[0].Key)
		}
	}
	if err := checkResume(ids, done); err != nil {
		return nil, err
	}
	p := &poolRun{m: m, key: nodes[0].Key, flushed: flushed, nodes: nodes, next: len(done), results: make([]poolResult, len(nodes)),
		going: make(chan struct{}, maxGoing*parallel)}
	for i, o := range done {
		p.results[i] = poolResult{outcome: o, finished: true, recorded: true}
	}
	for range min(parallel, len(nodes)-len(done)) {
		p.steps.Go(func() { p.work(ctx) })
	}
	p.steps.Wait()
	flushErr := p.flush(ctx, true)
	p.mu.Lock()
	defer p.mu.Unlock()
	if flushErr != nil {
		out, _ := p.prefix()
		return out, fmt.Errorf("record %d resources: %w", len(p.pending.entries), flushErr)
	}
	out, err := p.prefix()
	if errors.Is(err, ErrStopped) && p.flushErr != nil {
		err = p.flushErr // the pool stopped because a write failed
	}
	return out, err
}

// poolRun is one Pool under way; mu guards what follows it.
type poolRun struct {
	m       *Manager
	key     backend.ReleaseKey
	flushed func([]Outcome)
	nodes   []Node
	// steps are the workers and the deletes' waits.
	steps sync.WaitGroup
	// going bounds the deletes issued and not gone yet, as Batch's do
	// (maxGoing in each of parallel batches).
	going chan struct{}

	// flushing is held through a write of entries: one at a time, in the
	// order they were taken, while the workers go on (they take mu only to
	// keep an entry or an outcome).
	flushing sync.Mutex

	mu      sync.Mutex
	next    int  // the next node to start
	stop    bool // no node starts any more: one failed, or the pool was cancelled
	results []poolResult
	pending pendingEntries
	waiting []int // the nodes finished whose entries are in pending
	// flushErr is why a flush due between two nodes failed: the pool
	// stopped there.
	flushErr error
}

// poolResult is what became of one node of a pool.
type poolResult struct {
	outcome  Outcome
	err      error
	finished bool // its step is over: outcome, or err
	recorded bool // and its entry is written
}

// work starts nodes until none is left or the pool stops. A delete whose
// resource is not gone at once is waited for on a goroutine of its own
// while the worker goes on, as a Batch's deletes wait together.
func (p *poolRun) work(ctx context.Context) {
	for {
		p.mu.Lock()
		if p.stop || p.next == len(p.nodes) || ctx.Err() != nil {
			p.stop = true
			p.mu.Unlock()
			return
		}
		i := p.next
		p.next++
		p.mu.Unlock()

		in, start, step := p.nodes[i], time.Now(), context.WithoutCancel(ctx)
		if !in.Delete {
			res, err := p.m.apply(step, in, p.rec)
			p.finish(ctx, i, Outcome{ID: in.ID, Apply: res, Took: time.Since(start)}, err)
			continue
		}
		wait, err := p.m.startRecordedDelete(step, p.rec, in)
		if err != nil || wait == nil {
			p.finish(ctx, i, Outcome{ID: in.ID, Took: time.Since(start)}, err)
			continue
		}
		p.going <- struct{}{}
		p.steps.Go(func() {
			err := wait(step)
			if err == nil {
				err = tombstone(step, p.rec, in)
			}
			<-p.going
			p.finish(ctx, i, Outcome{ID: in.ID, Took: time.Since(start)}, err)
		})
	}
}

// finish takes node i's outcome (or failure, which stops the pool) and
// flushes what is due.
func (p *poolRun) finish(ctx context.Context, i int, o Outcome, err error) {
	p.mu.Lock()
	p.results[i] = poolResult{outcome: o, err: err, finished: true}
	if err != nil {
		p.stop = true
		p.mu.Unlock()
		return
	}
	p.waiting = append(p.waiting, i)
	due := p.pending.due()
	p.mu.Unlock()
	if !due {
		return
	}
	if err := p.flush(ctx, false); err != nil {
		p.mu.Lock()
		if p.flushErr == nil {
			p.flushErr, p.stop = fmt.Errorf("record %d resources: %w", len(p.pending.entries), err), true
		}
		p.mu.Unlock()
	}
}

// rec keeps a step's entry in pending (a record: steps call it from their
// workers).
func (p *poolRun) rec(_ context.Context, e backend.StateEntry) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending.add(e)
	return nil
}

// flush writes the pending entries (all, or only when they are due) and
// tells flushed the outcomes recorded so far, as far as they are all
// recorded. The entries are taken under mu and written outside it: a write
// holding mu held up every worker that finished a node meanwhile. Entries
// whose write failed go back to the front of pending, but for those of a
// resource with a newer entry kept meanwhile.
func (p *poolRun) flush(ctx context.Context, all bool) error {
	p.flushing.Lock()
	defer p.flushing.Unlock()
	p.mu.Lock()
	if !all && !p.pending.due() {
		p.mu.Unlock() // taken by the flush this one waited for
		return nil
	}
	entries, waiting := p.pending.entries, p.waiting
	p.pending.entries, p.waiting = nil, nil
	p.mu.Unlock()
	if len(entries) > 0 {
		if err := p.m.RecordBatch(context.WithoutCancel(ctx), p.key, entries); err != nil {
			p.mu.Lock()
			p.pending.putBack(entries)
			p.waiting = append(waiting, p.waiting...)
			p.mu.Unlock()
			return err
		}
	}
	p.mu.Lock()
	for _, i := range waiting {
		p.results[i].recorded = true
	}
	out, _ := p.prefix()
	p.mu.Unlock()
	if p.flushed != nil {
		p.flushed(out)
	}
	return nil
}

// prefix is the outcomes of the first nodes, as far as they are all done
// and recorded, and the error of the node after them: its failure, or
// ErrStopped when it never ran.
func (p *poolRun) prefix() ([]Outcome, error) {
	var out []Outcome
	for _, r := range p.results {
		switch {
		case r.finished && r.err != nil:
			return out, r.err
		case !r.recorded:
			return out, ErrStopped
		}
		out = append(out, r.outcome)
	}
	return out, nil
}
