package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// PreviewResult is a batch's previews, one per resource in order: its change,
// or (Errors[i] not empty) why it cannot be previewed.
type PreviewResult struct {
	Changes []engine.Change `json:"changes"`
	Errors  []string        `json:"errors,omitempty"`
}

// maxPreviewResult bounds a preview batch's result, well under Temporal's
// 2 MB payload limit; a batch of changes with very many fields each keeps
// fewer of them (the rest counted).
const (
	maxPreviewResult = 1 << 20
	shrunkFields     = 10
)

// PreviewResources previews the resources of a batch (release.PreviewBatch),
// reading what is live with the run's other batches (one list per kind and
// namespace for the whole preview). In an apply, the refreshed state of
// unchanged resources is recorded in one write.
func (a *Activities) PreviewResources(ctx context.Context, in BatchInput) (PreviewResult, error) {
	defer heartbeat(ctx)()
	nodes := make([]release.Node, len(in.IDs))
	for i, id := range in.IDs {
		n := release.Node(in.Node)
		n.ID = id
		nodes[i] = n
	}
	snapshot := ""
	if activity.IsActivity(ctx) {
		snapshot = runID(ctx)
	}
	changes, errs, refresh, err := a.m.PreviewBatch(ctx, nodes, snapshot)
	if err == nil && in.Node.Key.Revision != 0 {
		err = a.m.RecordBatch(ctx, in.Node.Key, refresh)
	}
	if err != nil {
		return PreviewResult{}, temporalError(err)
	}
	out := PreviewResult{Changes: changes}
	for i, e := range errs {
		if e != nil {
			if out.Errors == nil {
				out.Errors = make([]string, len(errs))
			}
			out.Errors[i] = e.Error()
		}
	}
	if data, err := json.Marshal(out.Changes); err == nil && len(data) > maxPreviewResult {
		for i := range out.Changes {
			shrink(&out.Changes[i])
		}
	}
	return out, nil
}

// shrink keeps the first shrunkFields field changes of c and counts the rest.
func shrink(c *engine.Change) {
	if n := len(c.Fields); n > shrunkFields {
		c.Fields = append(c.Fields[:shrunkFields-1:shrunkFields-1],
			engine.FieldChange{Path: fmt.Sprintf("(%d more fields change)", n-shrunkFields+1)})
	}
}
