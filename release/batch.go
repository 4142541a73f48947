package release

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kumoproj/kumo/backend"
)

// Outcome is what the step of one resource of a batch did.
type Outcome struct {
	ID string
	// Apply is an applied resource's result (whether its node still waits
	// for health); zero for a delete.
	Apply ApplyResult
	// Took is how long the step ran.
	Took time.Duration
	// Err is why an undo of CompensateBatch failed for good; the batch went
	// on after it. Steps of other batches stop at their failure instead.
	Err error
}

// Batch flushing: the outcomes of a batch are written together, every
// flushEvery resources or flushAfter after the first unwritten one, whichever
// comes first, and at the end. A crash re-does at most the resources since the
// last flush (each step is idempotent).
const (
	flushEvery = 25
	flushAfter = 500 * time.Millisecond
)

// maxGoing bounds the deletes of a batch issued and not yet gone: each polls
// its object (Kubernetes: a read every half second at most), and ten batches
// of a hundred would read more than a client's request limit allows.
const maxGoing = 20

// ErrStopped ends a Batch whose context was cancelled between two resources.
var ErrStopped = errors.New("stopped")

// RecordBatch stores several resources' outcomes in an unfinished release in
// one write. Recording the same entries again changes nothing.
func (m *Manager) RecordBatch(ctx context.Context, key backend.ReleaseKey, entries []backend.StateEntry) error {
	return m.backend.PutStateEntries(ctx, key, entries)
}

// Batch runs the steps of nodes one after another: Apply, or Delete for a
// node with Delete set. done are the outcomes an earlier attempt of the same
// batch recorded (its first len(done) nodes), which are not run again. The
// outcomes are recorded in one write per flush, and flushed is called with
// every outcome recorded so far after each flush (to heartbeat them).
//
// A delete whose resource is not gone when issued (a Kubernetes object held
// by finalizers; runtime.DeleteStarter) is waited for on its own goroutine
// while the batch issues the next deletes (up to maxGoing at once): the
// batch's deletes wait together, not one after another. Outcomes are still
// taken in order, each once its resource is gone and its tombstone recorded;
// a retry re-issues those not taken, which deletes nothing twice.
//
// A cancelled ctx stops the batch between two resources, never during one: a
// step runs on a context the cancel does not reach, and the deletes issued
// are waited for. Batch returns the outcomes of the nodes done, in order, and
// the error that stopped it: the failure of the node after the last outcome,
// or ErrStopped. Everything done is recorded before it returns, whatever the
// error.
func (m *Manager) Batch(ctx context.Context, nodes []Node, done []Outcome, flushed func([]Outcome)) ([]Outcome, error) {
	return m.batch(ctx, nodes, done, flushed, false)
}

// Chain is Batch for nodes that are a chain of the graph, each depending on
// the one before it: a delete is issued only once the resource before it is
// gone (dependents go first, as in the walk), where Batch lets its deletes
// wait together. Applies already go one after another, each after the
// deletes before it are done.
func (m *Manager) Chain(ctx context.Context, nodes []Node, done []Outcome, flushed func([]Outcome)) ([]Outcome, error) {
	return m.batch(ctx, nodes, done, flushed, true)
}

// checkResume checks that what an earlier attempt of a batch of ids did
// (done, in order) is the batch's first resources, so a retry may go on after
// them; an ErrInvalid error says how they differ.
func checkResume(ids []string, done []Outcome) error {
	if len(done) > len(ids) {
		return kindf(ErrInvalid, "batch of %d resources: %d already done", len(ids), len(done))
	}
	for i, o := range done {
		if o.ID != ids[i] {
			return kindf(ErrInvalid, "batch: resource %d is %s, the earlier attempt did %s", i, ids[i], o.ID)
		}
	}
	return nil
}

func (m *Manager) batch(ctx context.Context, nodes []Node, done []Outcome, flushed func([]Outcome), chain bool) ([]Outcome, error) {
	ctx = oneStep(ctx)
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	if err := checkResume(ids, done); err != nil {
		return nil, err
	}
	b := &batchRun{m: m, key: nodes[0].Key, flushed: flushed, out: append([]Outcome(nil), done...)}
	b.recorded = len(b.out)
	waits, stopWaits := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWaits() // after a failed write: the waits still going are abandoned
	var stepErr error
	for _, in := range nodes[len(done):] {
		if ctx.Err() != nil {
			stepErr = ErrStopped
			break
		}
		if in.Key != b.key {
			stepErr = kindf(ErrInvalid, "batch: %s is of release %s, not %s", in.ID, in.Key, b.key)
			break
		}
		start := time.Now()
		step := context.WithoutCancel(ctx)
		if in.Delete {
			if chain {
				if stepErr = b.settle(0); stepErr != nil {
					break
				}
			}
			wait, err := m.startRecordedDelete(step, b.rec, in)
			if err != nil {
				stepErr = err
				break
			}
			b.going = append(b.going, startWait(waits, in, start, wait))
		} else {
			if stepErr = b.settle(0); stepErr != nil {
				break
			}
			res, err := m.apply(step, in, b.rec)
			if err != nil {
				stepErr = err
				break
			}
			b.out = append(b.out, Outcome{ID: in.ID, Apply: res, Took: time.Since(start)})
		}
		if stepErr = b.settle(maxGoing - 1); stepErr != nil {
			break
		}
		if err := b.flushDue(ctx); err != nil {
			return b.out[:b.recorded], err
		}
	}
	// The deletes issued are seen through: a failure among them came before
	// the step that stopped the batch.
	if err := b.settle(0); err != nil {
		stepErr = err
	}
	if err := b.flush(ctx); err != nil {
		return b.out[:b.recorded], errors.Join(stepErr, fmt.Errorf("record %d resources: %w", len(b.pending.entries), err))
	}
	return b.out, stepErr
}

// batchRun is one Batch under way.
type batchRun struct {
	m       *Manager
	key     backend.ReleaseKey
	flushed func([]Outcome)

	out      []Outcome
	recorded int // out[:recorded] is written
	pending  pendingEntries
	going    []*goingDelete // deletes issued whose outcome is not taken yet, in order
}

// pendingEntries are the entries of a batch's steps not written yet.
type pendingEntries struct {
	entries []backend.StateEntry
	since   time.Time // when the first came
}

// add keeps e, replacing an entry of the same resource (a step that failed
// may have left one, which is flushed with the rest).
func (p *pendingEntries) add(e backend.StateEntry) {
	for i := range p.entries {
		if p.entries[i].ID == e.ID {
			p.entries[i] = e
			return
		}
	}
	if len(p.entries) == 0 {
		p.since = time.Now()
	}
	p.entries = append(p.entries, e)
}

// putBack returns entries taken for a write that failed to the front of
// pending, leaving out those of a resource with a newer entry kept since.
func (p *pendingEntries) putBack(entries []backend.StateEntry) {
	newer := make(map[string]bool, len(p.entries))
	for _, e := range p.entries {
		newer[e.ID] = true
	}
	back := make([]backend.StateEntry, 0, len(entries)+len(p.entries))
	for _, e := range entries {
		if !newer[e.ID] {
			back = append(back, e)
		}
	}
	if len(p.entries) == 0 && len(back) > 0 {
		p.since = time.Now()
	}
	p.entries = append(back, p.entries...)
}

// due reports whether they are to be written: flushEvery of them wait, or
// the first has waited flushAfter.
func (p *pendingEntries) due() bool {
	return len(p.entries) >= flushEvery || len(p.entries) > 0 && time.Since(p.since) >= flushAfter
}

// flush writes the pending entries.
func (b *batchRun) flush(ctx context.Context) error {
	if len(b.pending.entries) == 0 {
		return nil
	}
	if err := b.m.RecordBatch(context.WithoutCancel(ctx), b.key, b.pending.entries); err != nil {
		return err
	}
	b.pending.entries, b.recorded = nil, len(b.out)
	if b.flushed != nil {
		b.flushed(b.out[:b.recorded:b.recorded])
	}
	return nil
}

// flushDue flushes once the pending entries are due.
func (b *batchRun) flushDue(ctx context.Context) error {
	if !b.pending.due() {
		return nil
	}
	if err := b.flush(ctx); err != nil {
		return fmt.Errorf("record %d resources: %w", len(b.pending.entries), err)
	}
	return nil
}

// rec keeps a step's entry in pending.
func (b *batchRun) rec(_ context.Context, e backend.StateEntry) error {
	b.pending.add(e)
	return nil
}

// settle takes the outcomes of the issued deletes, in order, as far as they
// are gone, waiting for the first ones until at most keep are going; the
// first that failed is the error.
func (b *batchRun) settle(keep int) error {
	for len(b.going) > 0 {
		g := b.going[0]
		if g.done != nil {
			if len(b.going) <= keep {
				select {
				case <-g.done:
				default:
					return nil
				}
			}
			<-g.done
			if g.err != nil {
				return g.err
			}
			if err := tombstone(context.Background(), b.rec, g.in); err != nil {
				return err
			}
		}
		b.going = b.going[1:]
		b.out = append(b.out, Outcome{ID: g.in.ID, Took: g.took})
	}
	return nil
}

// goingDelete is a delete of a batch, issued; done is nil when its resource
// was gone at once, else closed once its wait is over (err).
type goingDelete struct {
	in   Node
	done chan struct{}
	err  error
	took time.Duration
}

// startWait runs wait (nil: the resource is gone) on its own goroutine.
func startWait(ctx context.Context, in Node, start time.Time, wait func(context.Context) error) *goingDelete {
	g := &goingDelete{in: in, took: time.Since(start)}
	if wait == nil {
		return g
	}
	g.done = make(chan struct{})
	go func() {
		defer close(g.done)
		g.err = wait(ctx)
		g.took = time.Since(start)
	}()
	return g
}
