package client

import (
	"context"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/kumoproj/kumo/runspec"
)

// pollerFresh is how recently a worker must have polled a queue to count as
// serving it. A live idle worker polls again at least every minute (one long
// poll); Temporal lists a worker that went away for minutes longer.
const pollerFresh = 90 * time.Second

// WaitingForWorker is the status of a run whose runtime steps wait in queue
// for a worker that nobody runs.
func WaitingForWorker(queue string) string {
	return "waiting for a worker on queue " + queue + " (start one with `kumo worker --task-queue " + queue + "`)"
}

// addWaiting says, in p.Waiting, that the run waits for a worker when one of
// its steps is scheduled on a workspace's task queue (temporal.taskQueue)
// that no worker polls. A run cannot see this itself: without a worker its
// step simply never starts.
func (r *Run) addWaiting(ctx context.Context, desc *workflowservice.DescribeWorkflowExecutionResponse, p *runspec.Progress) {
	queues := map[string]bool{}
	for _, a := range desc.GetPendingActivities() {
		q := a.GetActivityOptions().GetTaskQueue().GetName()
		if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED && q != "" && q != runspec.TaskQueue {
			queues[q] = true
		}
	}
	names := make([]string, 0, len(queues))
	for q := range queues {
		names = append(names, q)
	}
	sort.Strings(names)
	for _, q := range names {
		if !r.c.served(ctx, q) {
			p.Waiting = WaitingForWorker(q)
			return
		}
	}
}

// served reports whether a worker polled queue for activities recently. An
// error counts as served: the message must not be a guess.
func (c *Client) served(ctx context.Context, queue string) bool {
	d, err := c.temporal.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return true
	}
	for _, p := range d.GetPollers() {
		if time.Since(p.GetLastAccessTime().AsTime()) < pollerFresh {
			return true
		}
	}
	return false
}
