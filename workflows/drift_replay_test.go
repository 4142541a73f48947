package workflows

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
)

// TestRecordDriftHistories records DriftCheck runs for the replay test (with
// -record; -record-only and -record-tag as there): a check that finds drift
// (drift-warn) and, from the version that notifies and remediates
// (driftRemediateChange), one that tells a webhook (drift-warn-v2) and one
// that remediates (drift-remediate-v2). TestReplayRecordedHistories replays
// every file.
func TestRecordDriftHistories(t *testing.T) {
	if !*record {
		t.Skip("records histories only with -record")
	}
	ctx := context.Background()
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	h := newHarness(t)
	tc := startWorker(t, h.acts)
	a, b := cm("a"), cm("b")
	a.Attributes["data"] = map[string]any{"k": "v"}
	hash, err := h.backend.PutSpec(ctx, &engine.Spec{Resources: []engine.Resource{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	apply, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue},
		runspec.ApplyWorkflow, runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := apply.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, run := range driftRecordings {
		if *recordOnly != "" && !slices.Contains(strings.Split(*recordOnly, ","), run.name) {
			continue
		}
		h.rt.mu.Lock()
		h.rt.objects[a.ID]["data"] = map[string]any{"k": "changed"}
		h.rt.mu.Unlock()
		in := runspec.DriftInput{Project: "p", Workspace: "w", Mode: run.mode}
		if run.webhook {
			in.Drift.Webhook = testHook(t, h.backend, hook.URL)
		}
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kumo-drift/p/w/" + run.name, TaskQueue: runspec.TaskQueue}, runspec.DriftWorkflow, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := wr.Get(ctx, nil); err != nil {
			t.Fatalf("run %s: %v", run.name, err)
		}
		saveHistory(t, tc, wr, run.name)
	}
}

// driftRecordings are the drift checks TestRecordDriftHistories records.
var driftRecordings = []struct {
	name    string
	mode    string
	webhook bool
}{
	{"drift-warn", "", false},
	{"drift-warn-v2", drift.ModeWarn, true},
	{"drift-remediate-v2", drift.ModeRemediate, true},
}
