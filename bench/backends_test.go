package main

import (
	"context"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/postgres"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/internal/benchspec"
	"github.com/kumoproj/kumo/internal/pgtest"
	"github.com/kumoproj/kumo/internal/s3test"
	"github.com/kumoproj/kumo/internal/tfstatetest"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
	"github.com/kumoproj/kumo/worker"
	"github.com/kumoproj/kumo/workflows"
)

// BenchmarkBackends runs, on each backend in one process, the same work and
// prints the figures side by side: a flat apply of BENCH_APPLY ConfigMaps
// (default 2,000) and its re-apply, through the embedded Temporal server and a
// worker whose runtime is in memory (so the backend, not a cluster, is what
// differs), with the peak live heap of each; then `release list` over
// BENCH_REVISIONS revisions (default 1,000) created through the backend.
// BENCH_BACKENDS=postgres,http runs only those.
//
//	go test ./bench -run '^$' -bench Backends -benchtime 1x
//
// Each backend runs on loopback: the local directory, versitygw (S3),
// PostgreSQL (internal/pgtest), and the Terraform http protocol server of
// internal/tfstatetest with file storage.
func BenchmarkBackends(b *testing.B) {
	applyN := envInt(b, "BENCH_APPLY", 2000)
	revisions := envInt(b, "BENCH_REVISIONS", 1000)
	pg := pgtest.Start(b)
	s3srv := s3test.Start(b)
	state := tfstatetest.Start(b, tfstatetest.Bearer("bench"))
	for _, kv := range append(append(pg.Env(), s3srv.Env()...), state.Env()...) {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	backends := []struct{ name, url string }{
		{"local", ""},
		{"s3", "s3://" + s3srv.Bucket(b) + "/bench"},
		{"postgres", pg.BareURL(pg.NewDatabase(b))},
		{"http", state.URL},
	}
	only := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("BENCH_BACKENDS"), ",") {
		if n != "" {
			only[n] = true
		}
	}
	var lines []string
	for _, be := range backends {
		if len(only) > 0 && !only[be.name] {
			continue
		}
		b.Run(be.name, func(b *testing.B) {
			for range b.N {
				f, err := benchBackend(b, be.url, applyN, revisions)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(f.apply.Seconds(), "apply-s")
				b.ReportMetric(f.reapply.Seconds(), "reapply-s")
				b.ReportMetric(float64(f.list.Microseconds())/1000, "list-ms")
				b.ReportMetric(float64(f.peakHeap>>20), "peak-heap-MiB")
				lines = append(lines, fmt.Sprintf("| %s | %.2f | %.2f | %d | %.1f | %d |", be.name,
					f.apply.Seconds(), f.reapply.Seconds(), f.peakHeap>>20, float64(f.list.Microseconds())/1000, f.written>>10))
			}
		})
	}
	fmt.Printf("\n| backend | flat-%d apply (s) | re-apply (s) | peak live heap (MiB) | release list of %d revisions (ms) | KiB written by the apply |\n| --- | --- | --- | --- | --- | --- |\n%s\n",
		applyN, revisions, strings.Join(lines, "\n"))
}

type backendFigures struct {
	apply, reapply, list time.Duration
	peakHeap             uint64
	written, stored      int64
}

func envInt(b *testing.B, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want a positive number", name, v)
		}
		return n
	}
	return def
}

func benchBackend(b *testing.B, url string, applyN, revisions int) (backendFigures, error) {
	var f backendFigures
	ctx := context.Background()
	home := b.TempDir()
	srv, err := embedded.Start(ctx, embedded.Options{Dir: home + "/temporal"})
	if err != nil {
		return f, err
	}
	defer func() { _ = srv.Stop() }()
	co, err := srv.ConnectionOptions()
	if err != nil {
		return f, err
	}
	tc, err := sdkclient.DialContext(ctx, sdkclient.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quiet, ConnectionOptions: co})
	if err != nil {
		return f, err
	}
	defer tc.Close()
	c, err := client.Open(client.Options{Home: home, Backend: url, TemporalAddress: srv.Address(), Namespace: srv.Namespace(),
		Connection: ownerProfile(srv), InsecurePlaintext: true})
	if err != nil {
		return f, err
	}
	defer c.Close()
	w := sdkworker.New(tc, runspec.TaskQueue, sdkworker.Options{MaxHeartbeatThrottleInterval: activities.HeartbeatThrottle,
		Interceptors: []interceptor.WorkerInterceptor{workflows.Interceptor}})
	workflows.Register(w)
	activities.Register(w, activities.New(c.Backend(), nullRuntimes{memory.New()}, worker.RunChecker(tc)))
	if err := w.Start(); err != nil {
		return f, err
	}
	defer w.Stop()

	k := &kumo{c: c}
	spec := benchspec.ConfigMaps("bench", applyN, false)
	watch := startPeakHeap()
	w0, _ := bytesWritten(c.Backend())
	if f.apply, _, err = k.run(ctx, "bench", spec, runspec.RuntimeSettings{}, 0); err != nil {
		return f, fmt.Errorf("apply: %w", err)
	}
	w1, _ := bytesWritten(c.Backend())
	f.written = w1 - w0
	if f.reapply, _, err = k.run(ctx, "bench", spec, runspec.RuntimeSettings{}, 0); err != nil {
		return f, fmt.Errorf("re-apply: %w", err)
	}
	f.peakHeap = watch.stop()
	w2, _ := bytesWritten(c.Backend())
	if postgres.IsURL(url) {
		// What the table and its TOAST hold after the apply and re-apply,
		// against the bytes handed to it: PostgreSQL compresses large values.
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return f, err
		}
		err = conn.QueryRow(ctx, `SELECT pg_total_relation_size('kumo_objects')`).Scan(&f.stored)
		conn.Close(ctx)
		if err != nil {
			return f, err
		}
		b.Logf("postgres: %d KiB written through the store by the apply and re-apply, kumo_objects holds %d KiB (table, TOAST and indexes)", (w2-w0)>>10, f.stored>>10)
	}

	// release list over many revisions, created through the backend (a run
	// per revision would time Temporal, not the backend).
	be := c.Backend()
	small := &engine.Spec{Resources: spec.Resources[:1]}
	hash, err := be.PutSpec(ctx, small)
	if err != nil {
		return f, err
	}
	if err := forRevisions(ctx, be, "listed", revisions, hash); err != nil {
		return f, err
	}
	start := time.Now()
	list, err := be.ListReleases(ctx, "listed", "default")
	f.list = time.Since(start)
	if err != nil {
		return f, err
	}
	if len(list) != revisions {
		return f, fmt.Errorf("release list: %d revisions, want %d", len(list), revisions)
	}
	return f, nil
}

// forRevisions creates revisions 1..n of project/default, finished.
func forRevisions(ctx context.Context, be backend.Backend, project string, n int, hash string) error {
	now := time.Now().UTC()
	for i := 1; i <= n; i++ {
		r := &engine.Release{Project: project, Workspace: "default", Stack: "base", Revision: i,
			Operation: engine.OperationApply, Phase: engine.PhaseSucceeded, SpecHash: hash,
			CreateTime: now, ModifyTime: now, WorkflowID: "kumo/" + project + "/default", RunID: fmt.Sprintf("run-%d", i)}
		if err := be.CreateRelease(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// peakHeap samples the live heap every 50 ms until stop.
type peakHeap struct {
	done chan struct{}
	high chan uint64
}

func startPeakHeap() *peakHeap {
	p := &peakHeap{done: make(chan struct{}), high: make(chan uint64, 1)}
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var high uint64
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			high = max(high, sample[0].Value.Uint64())
			select {
			case <-p.done:
				p.high <- high
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *peakHeap) stop() uint64 {
	close(p.done)
	return <-p.high
}
