package client

import (
	"context"
	"fmt"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/kumoproj/kumo/server"
	"github.com/kumoproj/kumo/worker"
)

// ServerOptions configure StartServer: where the server listens, and how long
// its worker lets activities finish.
type ServerOptions struct {
	server.Options
	// ShutdownGrace is how long Stop lets activities in flight finish.
	ShutdownGrace time.Duration
}

// StartServer starts `kumo server` on the home opts name (see server.Start),
// with a worker that keeps releases in opts' backend: the one-shot commands'
// embedded server and in-process worker, kept running.
func StartServer(ctx context.Context, opts Options, so ServerOptions) (*server.Server, error) {
	c, err := OpenContext(ctx, opts) // defaults, and the backend the worker uses
	if err != nil {
		return nil, err
	}
	opts = c.opts
	startWorker := func(ctx context.Context, address string) (func(), error) {
		tc, err := sdkclient.DialContext(ctx, sdkclient.Options{
			HostPort: address, Namespace: opts.Namespace, Logger: sdklog.NewStructuredLogger(opts.Logger),
			DataConverter: c.DataConverter(),
		})
		if err != nil {
			return nil, fmt.Errorf("connect to Temporal at %s: %w", address, err)
		}
		w := worker.NewWithOptions(tc, c.backend, worker.Options{StopTimeout: so.ShutdownGrace})
		if err := w.Start(); err != nil {
			tc.Close()
			return nil, fmt.Errorf("start the worker: %w", err)
		}
		return func() { w.Stop(); tc.Close() }, nil
	}
	return server.Start(ctx, server.Config{
		Home: absHome(opts.Home), Namespace: opts.Namespace, Logger: opts.Logger, Backend: opts.Backend, CodecKeys: c.keys,
		StartWorker: startWorker,
	}, so.Options)
}
