package client_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

// BenchmarkGenerate50Apps is `kumo generate` of a stack with 50 apps (built-in
// generators only), end to end as the CLI runs it: open the client, start the
// embedded Temporal server and worker, run the Generate workflow, read the Spec.
// Each iteration uses an existing KUMO_HOME (the usual case) whose server was
// stopped; ms/op is the whole command minus process start.
func BenchmarkGenerate50Apps(b *testing.B) {
	stack := benchStack(b, 50)
	home := b.TempDir()
	generate := func() time.Duration {
		ctx := context.Background()
		start := time.Now()
		c, err := client.Open(client.Options{Home: home})
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := c.Close(); err != nil {
				b.Error(err)
			}
		}()
		run, err := c.Generate(ctx, client.Request{Project: "bench", Workspace: engine.DefaultWorkspace, StackDir: stack})
		if err != nil {
			b.Fatal(err)
		}
		spec, err := run.Spec(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(spec.Resources) != 101 {
			b.Fatalf("%d resources, want a namespace and a deployment and service per app", len(spec.Resources))
		}
		return time.Since(start)
	}
	generate() // the first run creates the Temporal database
	b.ResetTimer()
	var total time.Duration
	for range b.N {
		total += generate()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/generate")
}

func benchStack(b *testing.B, apps int) string {
	dir := b.TempDir()
	var app strings.Builder
	app.WriteString("apps:\n")
	for i := range apps {
		fmt.Fprintf(&app, `  app%02d:
    workload:
      type: service
      containers: {main: {image: "nginx:1.27", env: {INDEX: "%d"}, resources: {cpu: 100m, memory: 64Mi}}}
    accessories:
      net: {module: network, ports: [{port: 80}]}
`, i, i)
	}
	for path, content := range map[string]string{
		"project.yaml": "name: bench\n", "dev/stack.yaml": "name: dev\n", "dev/app.yaml": app.String(),
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return filepath.Join(dir, "dev")
}
