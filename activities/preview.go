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
// or (Errors[i] not empty) why it cannot be previewed. Refresh lists (by
// position in the batch) the unchanged resources whose record is stale, for a
// batch that defers their refresh (BatchInput.DeferRefresh): RefreshResources
// records them once the run is approved. Positions, not state entries: the
// result stays small.
type PreviewResult struct {
	Changes []engine.Change `json:"changes"`
	Errors  []string        `json:"errors,omitempty"`
	Refresh []int           `json:"refresh,omitempty"`
}

// NodePreview is one resource's preview (PreviewNode): its change, and
// whether it is unchanged but its record is stale (see PreviewResult.Refresh).
type NodePreview struct {
	Change  engine.Change `json:"change"`
	Refresh bool          `json:"refresh,omitempty"`
}

// RefreshResult says how many resources a RefreshResources recorded.
type RefreshResult struct {
	Recorded int `json:"recorded"`
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
// namespace for the whole preview). With DeferRefresh it writes nothing and
// lists the resources to refresh; without (runs started before it), in an
// apply, the refreshed state of unchanged resources is recorded in one write.
func (a *Activities) PreviewResources(ctx context.Context, in BatchInput) (PreviewResult, error) {
	defer heartbeat(ctx)()
	nodes := in.nodes()
	snapshot := ""
	if activity.IsActivity(ctx) {
		snapshot = runID(ctx)
	}
	var changes []engine.Change
	var errs []error
	var refresh []bool
	var err error
	if in.DeferRefresh {
		changes, errs, refresh, err = a.m.PreviewBatch(ctx, nodes, snapshot)
	} else {
		changes, errs, err = a.m.PreviewBatchAndRefresh(ctx, nodes, snapshot)
	}
	if err != nil {
		return PreviewResult{}, temporalError(err)
	}
	out := PreviewResult{Changes: changes}
	for i, r := range refresh {
		if r {
			out.Refresh = append(out.Refresh, i)
		}
	}
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

// PreviewNode previews one resource (release.Manager.Preview) and writes
// nothing: it says whether the resource's record needs a refresh instead.
// Runs started before refreshes were deferred preview with PreviewResource.
func (a *Activities) PreviewNode(ctx context.Context, in NodeInput) (NodePreview, error) {
	c, refresh, err := a.m.Preview(ctx, release.Node(in))
	if err != nil {
		return NodePreview{}, temporalError(err)
	}
	return NodePreview{Change: c, Refresh: refresh}, nil
}

// RefreshResources records the refreshed state of the resources of a batch
// that their run's preview found unchanged but recorded differently
// (release.Manager.Refresh), once the run is approved. It reads them live
// again, with the run's other refresh batches; a retry records the same.
func (a *Activities) RefreshResources(ctx context.Context, in BatchInput) (RefreshResult, error) {
	defer heartbeat(ctx)()
	snapshot := ""
	if activity.IsActivity(ctx) {
		// Not the preview's snapshot: what is live now, not what the preview listed.
		snapshot = runID(ctx) + "/refresh"
	}
	n, err := a.m.Refresh(ctx, in.nodes(), snapshot)
	return RefreshResult{Recorded: n}, temporalError(err)
}
