package workflows

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/codec"
	"github.com/kumoproj/kumo/internal/keyring"
)

// TestReplayRecordedHistoriesThroughTheCodec: the payload codec changes how
// payloads are stored, not the workflows, so histories recorded before it was
// on (plain payloads) still replay on workers whose data converter decrypts.
func TestReplayRecordedHistoriesThroughTheCodec(t *testing.T) {
	keys, err := keyring.LoadOrCreate(filepath.Join(t.TempDir(), keyring.FileName))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{DataConverter: codec.DataConverter(keys)})
	if err != nil {
		t.Fatal(err)
	}
	Register(r)
	for _, f := range files {
		if err := replay(r, f); err != nil {
			t.Errorf("replay %s through the codec: %v", f, err)
		}
	}
}
