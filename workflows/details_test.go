package workflows

import (
	"strings"
	"testing"

	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/testsuite"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// currentDetails is what the Web UI shows as the run's current details.
func currentDetails(t *testing.T, env *testsuite.TestWorkflowEnvironment) string {
	t.Helper()
	v, err := env.QueryWorkflow("__temporal_workflow_metadata") // the SDK's built-in query the UI uses
	if err != nil {
		t.Fatalf("metadata query: %v", err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	return md.GetCurrentDetails()
}

// TestDetailsSummariseTheRun: once the revision and the plan are known, the
// run's current details start with its summary line, while it waits for
// approval and after it ended.
func TestDetailsSummariseTheRun(t *testing.T) {
	h := newHarness(t)
	h.rt.objects["v1:ConfigMap:ns:b"] = cm("b").Attributes // taken over as it is
	const want = "apply p/w rev 1: 1 to create, 0 to update, 0 to delete, 1 to adopt\n\n"
	w := newWaitingRun(h, twoConfigMaps())
	w.in.StartedBy = "alice@host"
	w.whileWaiting(func(p runspec.Progress) {
		d := currentDetails(t, w.env)
		if !strings.HasPrefix(d, want) || !strings.Contains(d, "awaiting-approval: +1 ~0 -0 adopt 1 to approve, plan "+engine.ShortDigest(p.Digest)) {
			t.Errorf("details while awaiting approval:\n%s\nwant them to start with %q and name the plan", d, want)
		}
		w.answer(runspec.ApprovalRequest{Approve: true, By: "bob@host"}, func(_ runspec.ApprovalAnswer, err error) {
			if err != nil {
				t.Errorf("approval: %v", err)
			}
		})
	})
	if res, err := w.finish(); err != nil {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	// Then who started and approved it, and when (the test environment sends
	// no SubjectHeader: the names the client sent, marked unverified).
	d := currentDetails(t, w.env)
	lines := strings.Split(d, "\n")
	if !strings.HasPrefix(d, want+"done\n\n") || len(lines) != 6 ||
		!strings.HasPrefix(lines[4], "- started by alice@host (unverified) at ") || !strings.HasPrefix(lines[5], "- approved by bob@host (unverified) at ") {
		t.Errorf("details of the ended run:\n%s\nwant %q, then who started and approved it", d, want+"done")
	}
}
