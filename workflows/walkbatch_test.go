package workflows

import (
	"fmt"
	"testing"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// TestBatchWalkRunsChainsAsSteps: a chain of the graph goes as steps of up to
// maxBatch nodes in dependency order, cut where follows says a node may not
// be followed; a node waiting for two others never joins a chain's step;
// without follows every chain node is a step of its own, as before.
func TestBatchWalkRunsChainsAsSteps(t *testing.T) {
	chain := func(from, to int, deps [][]int32) [][]int32 {
		for i := from + 1; i < to; i++ {
			deps[i] = []int32{int32(i - 1)}
		}
		return deps
	}
	// a=0 -> b=1 -> d=3 <- c=2
	join := [][]int32{nil, {0}, nil, {1, 2}}
	for _, c := range []struct {
		name    string
		deps    [][]int32
		limit   int
		follows func(i int) bool
		want    string
	}{
		{"long chain, cut at 120", chain(0, 250, make([][]int32, 250)), 10, func(i int) bool { return i != 120 },
			"[0-99] [100-120] [121-220] [221-249]"},
		{"long chain, no follows", chain(0, 5, make([][]int32, 5)), 10, nil, "[0] [1] [2] [3] [4]"},
		{"two chains side by side", chain(5, 10, chain(0, 5, make([][]int32, 10))), 2, func(int) bool { return true }, "[0-4] [5-9]"},
		{"a join ends a chain", join, 10, func(int) bool { return true }, "[0-1] [2] [3]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			s.SetLogger(quietLogger)
			env := s.NewTestWorkflowEnvironment()
			var steps []string
			env.ExecuteWorkflow(func(ctx workflow.Context) error {
				notStarted := batchWalk{
					deps: c.deps, limit: c.limit, maxBatch: maxBatch,
					work:    func(int) bool { return true },
					class:   func(int) string { return "k" },
					follows: c.follows,
					start: func(nodes []int) []workflow.Future {
						for k := 1; k < len(nodes); k++ {
							if nodes[k] != nodes[k-1]+1 {
								t.Errorf("step %v is not a run of consecutive nodes", nodes)
							}
						}
						if len(nodes) == 1 {
							steps = append(steps, fmt.Sprintf("[%d]", nodes[0]))
						} else {
							steps = append(steps, fmt.Sprintf("[%d-%d]", nodes[0], nodes[len(nodes)-1]))
						}
						futures := make([]workflow.Future, len(nodes))
						for k := range nodes {
							f, set := workflow.NewFuture(ctx)
							set.Set(nil, nil)
							futures[k] = f
						}
						return futures
					},
					done: func(int, workflow.Future) error { return nil },
				}.run(ctx)
				if len(notStarted) > 0 {
					return fmt.Errorf("not started: %v", notStarted)
				}
				return nil
			})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(steps); got != "["+c.want+"]" {
				t.Errorf("steps %s, want [%s]", got, c.want)
			}
		})
	}
}
