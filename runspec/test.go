package runspec

import (
	"time"

	"github.com/kumoproj/kumo/engine"
)

// TestWorkflow runs the test hooks (helm.sh/hook: test) of a stack's latest
// release, as helm test does (kumo test). It takes the stack's run ID
// (MutatingWorkflowID): it never runs while an apply, destroy or rollback
// of the stack does.
const TestWorkflow = "Test"

// TestInput asks for a stack's tests.
type TestInput struct {
	Project   string          `json:"project"`
	Workspace string          `json:"workspace"`
	Settings  RuntimeSettings `json:"settings"`
	// Timeout bounds each test's wait (0: engine.DefaultWaitTimeout).
	Timeout time.Duration `json:"timeout,omitempty"`
}

// TestResult is what the tests of a release did: each test run, in order,
// and why one failed ("" when all passed). No tests: Runs is empty.
type TestResult struct {
	Revision int              `json:"revision"`
	Runs     []engine.HookRun `json:"runs,omitempty"`
	Error    string           `json:"error,omitempty"`
}
