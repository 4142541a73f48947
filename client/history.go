package client

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"
)

// HistorySize is how much a run's Temporal history holds: what Temporal's
// limits (2 MB per payload, 50 MB and 51,200 events per history) apply to.
type HistorySize struct {
	Events int
	// Bytes is the sum of the events' encoded sizes.
	Bytes int
	// LargestEvent is the encoded size of the largest event (it bounds the
	// largest payload).
	LargestEvent int
}

// HistorySize reads the run's history and measures it.
func (r *Run) HistorySize(ctx context.Context) (HistorySize, error) {
	var s HistorySize
	it := r.c.temporal.GetWorkflowHistory(ctx, r.WorkflowID, r.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return s, err
		}
		n := proto.Size(e)
		s.Events++
		s.Bytes += n
		s.LargestEvent = max(s.LargestEvent, n)
	}
	return s, nil
}
