package workflows

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/runspec"
)

// TestGenerateActivityRefusesUntrusted: a caller that starts a Generate
// directly, past every check a client makes, gets the worker's: a stack
// outside the worker's stack roots is not read, and a generator its workspace
// does not trust does not run.
func TestGenerateActivityRefusesUntrusted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newHarness(t)
	root := t.TempDir()
	activities.SetGeneration(h.acts, generate.Policy{StackRoots: []string{root}})
	tc := startWorker(t, h.acts)

	marker := filepath.Join(t.TempDir(), "ran")
	write := func(dir string) string {
		for path, content := range map[string]string{
			"project.yaml":   "name: p\ngenerators:\n  gen: {command: [./gen.sh]}\n",
			"dev/stack.yaml": "name: dev\n",
			"dev/app.yaml":   "apps: {web: {workload: {type: service, containers: {web: {image: nginx}}}, accessories: {c: {module: gen}}}}\n",
			"gen.sh":         "#!/bin/sh\ntouch " + marker + "\necho '{\"resources\": []}'\n",
		} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Join(dir, "dev")
	}
	generateRaw := func(stack string) error {
		raw := map[string]any{"stackDir": stack, "project": "p", "workspace": "default"}
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kumo/p/default/generate/raw", TaskQueue: runspec.TaskQueue}, runspec.GenerateWorkflow, raw)
		if err != nil {
			t.Fatal(err)
		}
		var res runspec.GenerateResult
		return wr.Get(ctx, &res)
	}
	for stack, want := range map[string]string{
		write(filepath.Join(root, "p")):        "is not trusted in workspace default",
		write(filepath.Join(t.TempDir(), "p")): "is not under a stack root this worker allows",
	} {
		err := generateRaw(stack)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("generate %s: %v, want %q", stack, err, want)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the generator ran")
	}
}
