package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"

	"github.com/kumoproj/kumo/runspec"
)

// metricsServer serves Prometheus metrics on /metrics.
type metricsServer struct {
	// handler feeds the Temporal SDK's metrics (polls, task latencies,
	// activities executed and failed, ...) and kumo's own, which the worker
	// records through it (worker/metrics.go), into them through OpenTelemetry.
	handler client.MetricsHandler
	meter   metric.Meter
	srv     *http.Server
}

// startMetrics serves Prometheus metrics on address (/metrics).
func startMetrics(address string, log *slog.Logger) (*metricsServer, error) {
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	m := &metricsServer{meter: provider.Meter("kumo")}
	if err := serve(address, "metrics", mux, &m.srv, log); err != nil {
		return nil, err
	}
	m.handler = temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{Meter: m.meter})
	return m, nil
}

func (m *metricsServer) stop() { _ = m.srv.Close() }

// Runs awaiting approval are counted every approvalCountInterval, each count
// bounded by approvalCountTimeout.
const (
	approvalCountInterval = 5 * time.Second
	approvalCountTimeout  = 3 * time.Second
)

// observeApprovals adds kumo_runs_awaiting_approval: how many runs of the
// namespace wait for an approval now, counted in Temporal's visibility store
// (their KumoStatus), so every worker reports the same number. The count runs
// on its own goroutine and the scrape reads the last one: a Temporal call
// records the SDK's own metrics, and an instrument created while a scrape
// collects would wait for that scrape, which would wait for the call.
func (m *metricsServer) observeApprovals(ctx context.Context, tc client.Client) error {
	query := fmt.Sprintf("%s = '%s' AND ExecutionStatus = 'Running'", runspec.AttrStatus, runspec.StatusAwaitingApproval)
	var last atomic.Int64
	last.Store(-1) // not counted yet
	count := func() {
		cctx, cancel := context.WithTimeout(ctx, approvalCountTimeout)
		defer cancel()
		if resp, err := tc.CountWorkflow(cctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query}); err == nil {
			last.Store(resp.GetCount())
		}
	}
	count()
	go func() {
		t := time.NewTicker(approvalCountInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				count()
			}
		}
	}()
	_, err := m.meter.Int64ObservableGauge("kumo_runs_awaiting_approval",
		metric.WithDescription("runs waiting for an approval (counted every 5 s)"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			if n := last.Load(); n >= 0 {
				o.Observe(n)
			}
			return nil
		}))
	return err
}
