package release_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// stack writes a project with one stack "dev" and returns the stack directory.
func stack(t *testing.T, app string) string {
	t.Helper()
	project := t.TempDir()
	files := map[string]string{"project.yaml": "name: p\n", "dev/stack.yaml": "name: dev\n", "dev/app.yaml": app}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(project, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(project, "dev")
}

func TestGenerate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m := release.New(b, nil, &runs{})
		m.SetGeneration(generate.Policy{AnyStackDir: true})
		in := runspec.GenerateInput{StackDir: stack(t, "apps: {web: {workload: {type: service, containers: {web: {image: nginx}}}}}\n"), Project: "p", Workspace: engine.DefaultWorkspace}
		res, err := m.Generate(ctx, "run-1", in)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stack != "dev" || res.Resources == 0 {
			t.Fatalf("Generate = %+v", res)
		}
		if spec, err := b.GetSpec(ctx, res.SpecHash); err != nil || len(spec.Resources) != res.Resources {
			t.Fatalf("stored spec: %v", err)
		}
		// A retry stores the same spec under the same hash.
		if again, err := m.Generate(ctx, "run-1", in); err != nil || again != res {
			t.Fatalf("Generate again = %+v, %v; want %+v", again, err, res)
		}
		if _, err := b.RunLog(ctx, "run-1"); err != nil {
			t.Fatalf("no run log: %v", err)
		}

		in.Workspace = "qa"
		_, err = m.Generate(ctx, "run-2", in)
		if !errors.Is(err, release.ErrGenerate) || !strings.Contains(err.Error(), `workspace "qa" does not exist`) {
			t.Fatalf("Generate for a missing workspace: %v, want ErrGenerate", err)
		}
		log, err := b.RunLog(ctx, "run-2")
		if err != nil || !strings.Contains(string(log), `generate failed: workspace "qa" does not exist`) {
			t.Fatalf("run log of the failed generate: %q, %v", log, err)
		}
	})
}
