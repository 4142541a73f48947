package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// CompensateBatchInput names the resources of one batch of undos of a failed
// apply, undone one after another in order: Actions[k] is what the apply did
// to IDs[k]. What they share is carried once.
type CompensateBatchInput struct {
	// Node is what the resources share (its ID is unused).
	Node    NodeInput       `json:"node"`
	IDs     []string        `json:"ids"`
	Actions []engine.Action `json:"actions"`
}

// CompensateResources undoes the resources of a batch one after another
// (release.Manager.CompensateBatch), heartbeating the outcomes so far: a
// retried attempt reads them back and goes on after them. An undo that fails
// for good is that resource's outcome (Outcome.Error) and the batch goes on.
// Any other failure (a backend error) fails the batch, to be retried, with
// the outcomes so far as its details. A cancel reaching the batch stops it
// after the resource in flight (Stopped).
func (a *Activities) CompensateResources(ctx context.Context, in CompensateBatchInput) (BatchResult, error) {
	if len(in.Actions) != len(in.IDs) {
		return BatchResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("compensate batch: %d resources, %d actions", len(in.IDs), len(in.Actions)), ErrTypeInvalid, nil)
	}
	undos := make([]release.Undo, len(in.IDs))
	for k, id := range in.IDs {
		node := release.Node(in.Node)
		node.ID, node.Delete = id, in.Actions[k] == engine.Delete // a node the spec dropped
		undos[k] = release.Undo{Node: node, Action: in.Actions[k]}
	}
	return runBatch(ctx, func(done []release.Outcome, undone func([]release.Outcome)) ([]release.Outcome, error) {
		return a.m.CompensateBatch(ctx, undos, done, undone)
	})
}
