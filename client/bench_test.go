package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/benchspec"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
	"github.com/kumoproj/kumo/runspec"
)

func TestMain(m *testing.M) { localclustertest.Main(m) }

// configMaps: a Namespace and n ConfigMaps that depend on it (flat) or each on
// the one before (chain).
func configMaps(ns string, n int, chain bool) *engine.Spec { return benchspec.ConfigMaps(ns, n, chain) }

// applyCold runs one apply the way `kumo apply --yes` does: open the client
// (starting the embedded Temporal server and worker) and apply. It returns the
// time until the release is recorded; Close is not counted, as the CLI exits
// without waiting for the server's graceful stop.
func applyCold(b *testing.B, home, kubeconfig, project string, spec *engine.Spec) (*local.Backend, time.Duration) {
	be, took := applyWith(b, client.Options{Home: home}, kubeconfig, project, spec)
	return be.(*local.Backend), took
}

// applyWith is applyCold with any client options (another backend).
func applyWith(b *testing.B, opts client.Options, kubeconfig, project string, spec *engine.Spec) (backend.Backend, time.Duration) {
	ctx := context.Background()
	start := time.Now()
	c, err := client.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			b.Error(err)
		}
	}()
	run, err := c.Apply(ctx, client.Request{
		Project: project, Workspace: "default", Spec: spec, AutoApprove: true, Parallelism: 10,
		Settings: runspec.RuntimeSettings{Kubeconfig: kubeconfig},
	})
	if err != nil {
		b.Fatal(err)
	}
	if res, err := run.Wait(ctx); err != nil || res.Phase != engine.PhaseSucceeded {
		b.Fatalf("apply: %+v %v", res, err)
	}
	return c.Backend(), time.Since(start)
}

// BenchmarkRollbackAndCompensation measures, with the same harness as
// BenchmarkApply: a rollback of 200 changed ConfigMaps to the revision before,
// and an apply of 200 new ConfigMaps whose last node fails, undone by
// --rollback-on-failure (apply and compensation together).
func BenchmarkRollbackAndCompensation(b *testing.B) {
	cluster := localclustertest.Start(b)
	ctx := context.Background()
	settings := runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig}
	run := func(b *testing.B, home string, start func(c *client.Client) (*client.Run, error)) time.Duration {
		began := time.Now()
		c, err := client.Open(client.Options{Home: home})
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := c.Close(); err != nil {
				b.Error(err)
			}
		}()
		r, err := start(c)
		if err != nil {
			b.Fatal(err)
		}
		// The compensation benchmark's apply fails on purpose; a rollback must not.
		wantFail := strings.HasSuffix(b.Name(), "/compensate-200")
		if _, err := r.Wait(ctx); (err != nil) != wantFail {
			b.Fatalf("run error %v, want a failure: %v", err, wantFail)
		}
		return time.Since(began)
	}
	b.Run("rollback-200", func(b *testing.B) {
		var elapsed time.Duration
		for i := 0; i < b.N; i++ {
			ns := fmt.Sprintf("bench-rb-%d-%d", i, time.Now().UnixNano()%1e6)
			home := b.TempDir()
			v1, v2 := configMaps(ns, 200, false), configMaps(ns, 200, false)
			for _, r := range v2.Resources[1:] {
				r.Attributes["data"] = map[string]any{"index": "changed"}
			}
			applyCold(b, home, cluster.Kubeconfig, ns, v1)
			applyCold(b, home, cluster.Kubeconfig, ns, v2)
			elapsed += run(b, home, func(c *client.Client) (*client.Run, error) {
				return c.Rollback(ctx, client.Request{Project: ns, Workspace: "default", AutoApprove: true, Parallelism: 10, Settings: settings}, 0, false)
			})
		}
		b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/rollback")
	})
	b.Run("compensate-200", func(b *testing.B) {
		var elapsed time.Duration
		for i := 0; i < b.N; i++ {
			ns := fmt.Sprintf("bench-cp-%d-%d", i, time.Now().UnixNano()%1e6)
			home := b.TempDir()
			applyCold(b, home, cluster.Kubeconfig, ns, configMaps(ns, 0, false))
			spec := configMaps(ns, 200, false)
			var deps []string
			for _, r := range spec.Resources[1:] {
				deps = append(deps, r.ID)
			}
			spec.Resources = append(spec.Resources, engine.Resource{
				ID: engine.KubernetesID("v1", "ConfigMap", ns, "broken"), Type: engine.Kubernetes, DependsOn: deps,
				Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "broken", "namespace": ns},
					"data": map[string]any{"k": "$kumo_path." + deps[0] + ".data.nope"}},
			})
			elapsed += run(b, home, func(c *client.Client) (*client.Run, error) {
				return c.Apply(ctx, client.Request{Project: ns, Workspace: "default", Spec: spec, AutoApprove: true, RollbackOnFailure: true, Parallelism: 10, Settings: settings})
			})
		}
		b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/apply+compensation")
	})
}

// BenchmarkApply measures cold applies against the local apiserver with the
// embedded Temporal server, and reports bytes written to the backend relative to
// the size of the state it recorded (as YAML).
func BenchmarkApply(b *testing.B) {
	cluster := localclustertest.Start(b)
	cases := []struct {
		name    string
		n       int
		chain   bool
		reapply bool
	}{
		{"flat-200", 200, false, false},
		{"reapply-200", 200, false, true},
		{"chain-200", 200, true, false},
		{"flat-2000", 2000, false, false},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var elapsed time.Duration
			var stateRatio float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				ns := fmt.Sprintf("bench-%s-%d-%d", tc.name, i, time.Now().UnixNano()%1e6)
				home := b.TempDir()
				spec := configMaps(ns, tc.n, tc.chain)
				if tc.reapply {
					applyCold(b, home, cluster.Kubeconfig, ns, spec)
				}
				b.StartTimer()
				be, took := applyCold(b, home, cluster.Kubeconfig, ns, spec)
				b.StopTimer()
				elapsed += took
				rev := 1
				if tc.reapply {
					rev = 2
				}
				stateRatio = float64(be.BytesWritten()) / float64(stateSize(b, be, ns, rev, tc.n+1))
			}
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/apply")
			b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N)/float64(tc.n+1), "ms/node")
			b.ReportMetric(stateRatio, "written/state")
		})
	}
}

// stateSize checks that revision rev of project records want resources and
// returns the size of its state as YAML (as release files held it before
// they were compressed: the figure bytes written are compared with).
func stateSize(b *testing.B, be backend.Backend, project string, rev, want int) int {
	rel, err := be.GetRelease(context.Background(), project, "default", rev)
	if err != nil {
		b.Fatal(err)
	}
	if rel.State == nil || len(rel.State.Resources) != want {
		b.Fatalf("release state has %v resources, want %d", rel.State, want)
	}
	n, err := backend.RecordSize(rel.State)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
