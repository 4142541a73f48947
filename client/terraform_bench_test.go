package client_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/terraformtest"
)

// localFiles: n independent local_file resources writing into dir.
func localFiles(dir string, n int) *engine.Spec {
	spec := &engine.Spec{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("f%03d", i)
		spec.Resources = append(spec.Resources, engine.Resource{
			ID: engine.TerraformID("hashicorp", "local", "local_file", name), Type: engine.Terraform,
			Attributes: map[string]any{"filename": filepath.Join(dir, name), "content": name},
			Extensions: map[string]any{engine.ExtProvider: terraformtest.LocalProvider, engine.ExtResourceType: "local_file"},
		})
	}
	return spec
}

// BenchmarkTerraformApply measures, with the harness of BenchmarkApply (cold
// `apply --yes`: embedded Temporal, worker, preview, apply, release), 20
// independent local_file resources: created on a worker with empty working
// directories and plugin cache, and applied again with no change.
func BenchmarkTerraformApply(b *testing.B) {
	tools := terraformtest.Ensure(b)
	for _, tc := range []struct {
		name    string
		reapply bool
	}{{"create-20", false}, {"reapply-20", true}} {
		b.Run(tc.name, func(b *testing.B) {
			const n = 20
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				tools.Setenv(b, b.TempDir())
				home, project := b.TempDir(), fmt.Sprintf("bench-tf-%d-%d", i, time.Now().UnixNano()%1e6)
				spec := localFiles(b.TempDir(), n)
				if tc.reapply {
					applyCold(b, home, "", project, spec)
				}
				b.StartTimer()
				be, took := applyCold(b, home, "", project, spec)
				b.StopTimer()
				elapsed += took
				rel, err := be.LatestRelease(b.Context(), project, "default")
				if err != nil || rel.State == nil || len(rel.State.Resources) != n {
					b.Fatalf("release records %v resources (%v), want %d", rel, err, n)
				}
			}
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/apply")
			b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N)/n, "ms/node")
		})
	}
}
