package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// startMetrics serves Prometheus metrics on address (/metrics) and returns the
// handler that feeds the Temporal SDK's metrics (polls, task latencies,
// activities executed and failed, ...) into them through OpenTelemetry.
func startMetrics(address string, log *slog.Logger) (client.MetricsHandler, func(), error) {
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	var srv *http.Server
	if err := serve(address, "metrics", mux, &srv, log); err != nil {
		return nil, nil, err
	}
	handler := temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{Meter: provider.Meter("kumo")})
	return handler, func() { _ = srv.Close() }, nil
}
