package activities

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/release"
)

// BatchInput names the resources of one batch step: all applied, or (Delete)
// all deleted, one after another. What they share is carried once.
type BatchInput struct {
	// Node is what the resources share (its ID is unused).
	Node   NodeInput `json:"node"`
	IDs    []string  `json:"ids"`
	Delete bool      `json:"delete,omitempty"`
	// Chain: the resources are a chain of the graph, each depending on the
	// one before (release.Manager.Chain).
	Chain bool `json:"chain,omitempty"`
	// DeferRefresh: a preview batch writes nothing, and lists the resources
	// whose record to refresh once the run is approved (RefreshResources).
	DeferRefresh bool `json:"deferRefresh,omitempty"`
	// Parallel (more than 1): up to that many of the resources go at once,
	// each taken by the first free worker (release.Manager.Pool).
	Parallel int `json:"parallel,omitempty"`
}

// nodes are the release nodes of the batch's resources.
func (in BatchInput) nodes() []release.Node {
	nodes := make([]release.Node, len(in.IDs))
	for i, id := range in.IDs {
		n := release.Node(in.Node)
		n.ID, n.Delete = id, in.Delete
		nodes[i] = n
	}
	return nodes
}

// Outcome is what one resource's step in a batch did.
type Outcome struct {
	ID string `json:"id"`
	// Apply says whether an applied resource still waits for health.
	Apply ApplyResult   `json:"apply"`
	Took  time.Duration `json:"took"`
	// Error is why an undo of CompensateResources failed for good; the batch
	// went on after it. Steps of other batches stop at their failure instead.
	Error string `json:"error,omitempty"`
}

// BatchResult lists the outcomes of a batch's resources done, in order. It
// is also a batch's heartbeat (what is recorded so far) and the details of
// its failure: the resource after the last outcome is the one that failed.
// Stopped: the run was cancelled; the resources after the last outcome never
// started.
type BatchResult struct {
	Outcomes []Outcome `json:"outcomes"`
	Stopped  bool      `json:"stopped,omitempty"`
}

// ApplyResources applies the resources of a batch (release.Manager.Batch).
func (a *Activities) ApplyResources(ctx context.Context, in BatchInput) (BatchResult, error) {
	return a.batch(ctx, in, false)
}

// DeleteResources deletes the resources of a batch and waits until they are
// gone (together: release.Manager.Batch).
func (a *Activities) DeleteResources(ctx context.Context, in BatchInput) (BatchResult, error) {
	return a.batch(ctx, in, true)
}

// batch runs one batch of applies or deletes (release.Manager.Batch, Chain
// or Pool).
func (a *Activities) batch(ctx context.Context, in BatchInput, del bool) (BatchResult, error) {
	if err := handOver(ctx); err != nil {
		return BatchResult{}, err
	}
	in.Delete = del
	nodes := in.nodes()
	return runBatch(ctx, func(done []release.Outcome, recorded func([]release.Outcome)) ([]release.Outcome, error) {
		switch {
		case in.Chain:
			return a.m.Chain(ctx, nodes, done, recorded)
		case in.Parallel > 1:
			return a.m.Pool(ctx, nodes, done, recorded, in.Parallel)
		}
		return a.m.Batch(ctx, nodes, done, recorded)
	})
}

// runBatch runs one batch step of the release (run: given the outcomes an
// earlier attempt recorded, it goes on after them and reports those it
// records), heartbeating the outcomes recorded so far: a retried attempt
// reads them back and goes on after them. A cancel (the run was cancelled; it
// comes with a heartbeat's answer) stops the batch after the resource in
// flight, and the outcomes so far are its result. A failure carries them as
// its details.
func runBatch(ctx context.Context, run func(done []release.Outcome, recorded func([]release.Outcome)) ([]release.Outcome, error)) (BatchResult, error) {
	var prev BatchResult
	lastHeartbeat(ctx, &prev)
	// The heartbeat (every batchBeat, not per record: each heartbeat the
	// worker sends is a write on the server) carries what is recorded.
	var mu sync.Mutex
	last := prev
	beat := func() any {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
	recorded := func(os []release.Outcome) {
		mu.Lock()
		defer mu.Unlock()
		last = BatchResult{Outcomes: outcomes(os)}
	}
	stop := beatEvery(ctx, batchBeat, beat)
	out, err := run(releaseOutcomes(prev.Outcomes), recorded)
	stop()
	res := BatchResult{Outcomes: outcomes(out)}
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, release.ErrStopped) && cancelledByRun(ctx):
		res.Stopped = true
		return res, nil
	}
	return BatchResult{}, batchFailure(err, res)
}

// batchFailure is the error of a batch stopped by err after res: retried
// unless the resource failed for good; the details tell the workflow what was
// done should this be the last attempt.
func batchFailure(err error, res BatchResult) error {
	terr := temporalError(err)
	var app *temporal.ApplicationError
	opts := temporal.ApplicationErrorOptions{Details: []any{res}}
	typ := ""
	if errors.As(terr, &app) {
		opts.NonRetryable, typ = app.NonRetryable(), app.Type()
	}
	return temporal.NewApplicationErrorWithOptions(err.Error(), typ, opts)
}

// cancelledByRun reports whether the activity's context ended because its run
// asked it to stop (the answer to a heartbeat said so). It also ends when the
// worker stops, or when a heartbeat could not be sent in time (a loaded
// server): then the batch must be retried, going on after what it recorded.
func cancelledByRun(ctx context.Context) bool {
	var c *temporal.CanceledError
	if !errors.As(context.Cause(ctx), &c) || !activity.IsActivity(ctx) {
		return false
	}
	select {
	case <-activity.GetWorkerStopChannel(ctx):
		return false
	default:
		return true
	}
}

// outcomes are the outcomes of a release batch, as its result carries them.
func outcomes(os []release.Outcome) []Outcome {
	out := make([]Outcome, len(os))
	for i, o := range os {
		out[i] = Outcome{ID: o.ID, Apply: ApplyResult(o.Apply), Took: o.Took}
		if o.Err != nil {
			out[i].Error = o.Err.Error()
		}
	}
	return out
}

// releaseOutcomes are the outcomes an earlier attempt of a batch
// heartbeated, as the release reported them.
func releaseOutcomes(os []Outcome) []release.Outcome {
	out := make([]release.Outcome, len(os))
	for i, o := range os {
		out[i] = release.Outcome{ID: o.ID, Apply: release.ApplyResult(o.Apply), Took: o.Took}
		if o.Error != "" {
			out[i].Err = errors.New(o.Error)
		}
	}
	return out
}
