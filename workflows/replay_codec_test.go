package workflows

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/codec"
	"github.com/kumoproj/kumo/internal/keyring"
)

// TestReplayRecordedHistoriesThroughTheCodec: the payload codec changes how
// payloads are stored, not the workflows: every recorded history, its payloads
// sealed as a worker with a key would have written them, replays on a worker
// whose data converter decrypts. The same history left plain does not: with a
// key configured, plain payloads are refused (codec.PlainPayloadError), so a
// run recorded without the key cannot go on once the key is on.
func TestReplayRecordedHistoriesThroughTheCodec(t *testing.T) {
	keys, err := keyring.LoadOrCreate(filepath.Join(t.TempDir(), keyring.FileName))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	// As kumo's workers run: the interceptor reads the plain kumo-subject
	// header, which the codec leaves alone.
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{DataConverter: codec.DataConverter(keys),
		Interceptors: []interceptor.WorkerInterceptor{Interceptor}})
	if err != nil {
		t.Fatal(err)
	}
	Register(r)
	for _, f := range files {
		h := readHistory(t, f)
		// The run's input does not decode, so the workflow ends at once
		// and the recorded commands do not match.
		if err := replayHistory(r, f, h); err == nil {
			t.Errorf("plain %s replayed through the codec: its plain payloads were taken", f)
		}
		sealHistory(t, codec.New(keys), h)
		if err := replayHistory(r, f, h); err != nil {
			t.Errorf("replay sealed %s through the codec: %v", f, err)
		}
	}
}

func readHistory(t *testing.T, f string) *historypb.History {
	t.Helper()
	fh, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	h, err := client.HistoryFromJSON(fh, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	return h
}

// replayHistory replays h, read from file f, on r with the historyBudget
// it was recorded with. A workflow that checks its own ID (Queue, Rollout)
// replays under the ID it ran with, which the start event holds (when a
// server that writes it recorded it); the others under the replayer's own.
func replayHistory(r worker.WorkflowReplayer, f string, h *historypb.History) error {
	budget := historyBudget
	defer func() { historyBudget = budget }()
	if strings.HasPrefix(filepath.Base(f), longPrefix) {
		historyBudget = longBudget
	}
	var opts worker.ReplayWorkflowHistoryOptions
	if id := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowId(); id != "" {
		opts.OriginalExecution = workflow.Execution{ID: id}
	}
	return r.ReplayWorkflowHistoryWithOptions(quietLogger, h, opts)
}

// sealHistory encodes every payload of h with c, as a worker with the key
// records them; search attributes and headers never go through the codec.
func sealHistory(t *testing.T, c *codec.Codec, h *historypb.History) {
	t.Helper()
	err := proxy.VisitPayloads(t.Context(), h, proxy.VisitPayloadsOptions{
		SkipSearchAttributes: true,
		Visitor: func(vc *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
			if _, header := vc.Parent.(*commonpb.Header); header {
				return ps, nil
			}
			return c.Encode(ps)
		},
	})
	if err != nil {
		t.Fatal(errors.Join(errors.New("seal history"), err))
	}
}
