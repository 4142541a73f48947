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
	"github.com/kumoproj/kumo/engine/notify"
	"github.com/kumoproj/kumo/runspec"
)

// TestRecordDriftHistories records DriftCheck runs for the replay test (with
// -record; -record-only and -record-tag as there): a check that finds drift
// (drift-warn) and, from the version that notifies and remediates
// (driftRemediateChange), one that tells a webhook (drift-warn-v2) and one
// that remediates (drift-remediate-v2), and from driftSinksChange on one that
// remediates and tells a Slack sink too (drift-sinks); and the apply they
// check, which tells the sink it succeeded (apply-events). TestReplayRecordedHistories replays
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
	// The apply tells a Slack sink it succeeded (eventsChange): recorded as
	// apply-events. (Apply runs of replay_test.go's recorder have IDs the
	// frontend now refuses; this one has its stack's.)
	chat := notify.Config{Sinks: []notify.Sink{{Name: "chat", Kind: notify.KindSlack, URL: hook.URL, AllowPrivate: true}}}
	if err := h.backend.PutWorkspace(ctx, &engine.Workspace{Name: "w", Notifications: chat}); err != nil {
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
	if *recordOnly == "" || slices.Contains(strings.Split(*recordOnly, ","), "apply-events") {
		saveHistory(t, tc, apply, "apply-events")
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
		if run.sinks {
			// Its events go to a Slack sink too (driftSinksChange).
			if err := h.backend.PutWorkspace(ctx, &engine.Workspace{Name: "w", Drift: drift.Config{Webhook: in.Drift.Webhook}, Notifications: chat}); err != nil {
				t.Fatal(err)
			}
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
	name           string
	mode           string
	webhook, sinks bool
}{
	{"drift-warn", "", false, false},
	{"drift-warn-v2", drift.ModeWarn, true, false},
	{"drift-remediate-v2", drift.ModeRemediate, true, false},
	{"drift-sinks", drift.ModeRemediate, true, true},
}
