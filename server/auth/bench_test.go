package auth

import (
	"testing"

	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/kumoproj/kumo/runspec"
)

// BenchmarkAuthorizeStart is the frontend's per-request cost of
// authenticating and authorizing a start of Apply by a deployer, with the
// identity and subject header stamped:
//
//	go test -run '^$' -bench BenchmarkAuthorize -benchmem ./server/auth
func BenchmarkAuthorizeStart(b *testing.B) {
	f := newFixture(b)
	ctx := f.as(b, "bob")
	b.ReportAllocs()
	for b.Loop() {
		req := start("kumo/shop/dev", runspec.ApplyWorkflow, runspec.TaskQueue)
		if err := f.i.authorize(ctx, wfs+"StartWorkflowExecution", req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthorizePoll is the cost on a worker's poll, the most frequent
// call.
func BenchmarkAuthorizePoll(b *testing.B) {
	f := newFixture(b)
	ctx := f.owner(b)
	b.ReportAllocs()
	for b.Loop() {
		req := &workflowservice.PollActivityTaskQueueRequest{Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: runspec.TaskQueue}, Identity: "w"}
		if err := f.i.authorize(ctx, wfs+"PollActivityTaskQueue", req); err != nil {
			b.Fatal(err)
		}
	}
}
