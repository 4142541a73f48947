package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/kumoproj/kumo/runspec"
)

// queueQueryTimeout bounds asking one run queue what waits in it.
const queueQueryTimeout = 30 * time.Second

// QueuedSpecs lists the run queues still open and asks each for the specs of
// the runs waiting in it (a collection of kumo's records keeps them). Any
// queue that does not answer fails it: a collection that went on without
// knowing would remove a spec a queued run still needs. A queue that ended
// meanwhile holds nothing.
func (r runChecker) QueuedSpecs(ctx context.Context) ([]string, error) {
	var out []string
	var token []byte
	query := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", runspec.QueueWorkflow)
	for {
		resp, err := r.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list the open run queues: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			id, runID := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
			qctx, cancel := context.WithTimeout(ctx, queueQueryTimeout)
			v, err := r.c.QueryWorkflow(qctx, id, runID, runspec.QueueQuery)
			cancel()
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("ask run queue %s what waits in it: %w", id, err)
			}
			var st runspec.QueueStatus
			if err := v.Get(&st); err != nil {
				return nil, fmt.Errorf("run queue %s: decode its answer: %w", id, err)
			}
			for _, w := range st.Waiting {
				if w.SpecHash != "" {
					out = append(out, w.SpecHash)
				}
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}
