package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
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
	"github.com/kumoproj/kumo/workflows"
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

// approvalCountTimeout bounds the visibility query of one scrape.
const approvalCountTimeout = 3 * time.Second

// observeApprovals adds kumo_runs_awaiting_approval: how many runs of the
// namespace wait for an approval now, counted in Temporal's visibility store
// (their KumoStatus) at each scrape, so every worker reports the same number.
func (m *metricsServer) observeApprovals(tc client.Client) error {
	query := fmt.Sprintf("%s = '%s' AND ExecutionStatus = 'Running'", runspec.AttrStatus, workflows.StatusAwaitingApproval)
	_, err := m.meter.Int64ObservableGauge("kumo_runs_awaiting_approval",
		metric.WithDescription("runs waiting for an approval"),
		metric.WithInt64Callback(func(ctx context.Context, o metric.Int64Observer) error {
			// A scrape must answer even when Temporal does not: the SDK
			// retries an unavailable frontend for as long as ctx lasts.
			ctx, cancel := context.WithTimeout(ctx, approvalCountTimeout)
			defer cancel()
			resp, err := tc.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
			if err != nil {
				return err
			}
			o.Observe(resp.GetCount())
			return nil
		}))
	return err
}
