package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/notify"
	"github.com/kumoproj/kumo/engine/planpolicy"
	"github.com/kumoproj/kumo/server"
	"github.com/kumoproj/kumo/worker"
)

// ServerOptions configure StartServer: where the server listens, and how long
// its worker lets activities finish.
type ServerOptions struct {
	server.Options
	// ShutdownGrace is how long Stop lets activities in flight finish.
	ShutdownGrace time.Duration
	// StackRoots are the directories the server's worker reads stacks under
	// (`kumo server --stack-root`); none: DefaultStackRoots.
	StackRoots []string
	// BearerVerifiers authenticate bearer credentials (kumo tokens, OIDC
	// JWTs): server.Config's.
	BearerVerifiers []server.BearerVerifier
	// Events is the operator's event configuration (`kumo server --events`,
	// LoadEvents).
	Events notify.Operator
	// PlanPolicies are the operator's server-wide plan policies (`kumo
	// server --plan-policies FILE`), checked by the server's worker.
	PlanPolicies *planpolicy.Set
}

// DefaultStackRoots are where a kumo server reads stacks when no
// --stack-root is given: the home directory of the user running it, whose
// own files those are. Anything else, /tmp included, must be named.
func DefaultStackRoots() ([]string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("no --stack-root given and no home directory to default to: %w", err)
	}
	return []string{home}, nil
}

// StackRoots makes each of roots absolute and checks it is a directory: a
// root that cannot be used is an error at start, not a stack refused later.
func StackRoots(roots []string) ([]string, error) {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(abs); err == nil && !fi.IsDir() {
				err = errors.New("not a directory")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("--stack-root %s: %w", r, err)
		}
		out = append(out, abs)
	}
	return out, nil
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
	roots := so.StackRoots
	if len(roots) == 0 {
		if roots, err = DefaultStackRoots(); err != nil {
			return nil, err
		}
	}
	if roots, err = StackRoots(roots); err != nil {
		return nil, err
	}
	generation := generate.Policy{StackRoots: roots, TrustedDirs: []string{GeneratorsDir(opts.Home)}, SourceCache: SourceCacheDir(opts.Home)}
	startWorker := func(ctx context.Context, address string, tlsCfg *tls.Config) (func(), error) {
		tc, err := sdkclient.DialContext(ctx, sdkclient.Options{
			HostPort: address, Namespace: opts.Namespace, Logger: sdklog.NewStructuredLogger(opts.Logger),
			DataConverter: c.DataConverter(), ConnectionOptions: sdkclient.ConnectionOptions{TLS: tlsCfg, GrpcCompression: compressionFor(address)},
		})
		if err != nil {
			return nil, fmt.Errorf("connect to Temporal at %s: %w", address, err)
		}
		w := worker.NewWithOptions(tc, c.backend, worker.Options{StopTimeout: so.ShutdownGrace, Generation: generation, Events: so.Events, Policies: so.PlanPolicies})
		if err := w.Start(); err != nil {
			tc.Close()
			return nil, fmt.Errorf("start the worker: %w", err)
		}
		return func() { w.Stop(); tc.Close() }, nil
	}
	so.Options.Auditor = c.FrontendAuditor()
	return server.Start(ctx, server.Config{
		Home: absHome(opts.Home), Namespace: opts.Namespace, Logger: opts.Logger, Backend: opts.Backend, CodecKeys: c.keys,
		StartWorker: startWorker, BearerVerifiers: so.BearerVerifiers,
	}, so.Options)
}
