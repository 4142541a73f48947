// Package client is kumo's Go API: start preview/apply/destroy runs, follow their
// progress, approve them, resume unfinished ones, and read releases. With no
// Temporal address it attaches to the `kumo server` running on $KUMO_HOME, if
// any (temporal.go), else starts an embedded Temporal server (SQLite under
// $KUMO_HOME/temporal) and an in-process worker for the life of the Client.
// StartServer runs that server (package server) with a worker.
package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/internal/keyring"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server"
	"github.com/kumoproj/kumo/server/embedded"
	"github.com/kumoproj/kumo/worker"
	"github.com/kumoproj/kumo/workflows"
)

// Options say where kumo keeps its data and which Temporal to use.
type Options struct {
	// Home is KUMO_HOME: the embedded Temporal database, and the records when
	// Backend is empty.
	Home string
	// Backend is where releases, state, workspaces and run logs live: empty for
	// the local backend under Home, s3://bucket[/prefix], or file:///dir (see
	// OpenBackend). Workers must use the same.
	Backend string
	S3      S3Options
	// TemporalAddress of an existing cluster; empty attaches to the home's
	// kumo server, else starts the embedded one.
	TemporalAddress string
	Namespace       string
	// Connection holds the rest of how to reach TemporalAddress (API key, TLS,
	// gRPC metadata), read by LoadConnection; ignored for the embedded server
	// and a kumo server this client attaches to.
	Connection envconfig.ClientConfigProfile
	// DialTimeout bounds connecting to TemporalAddress; default DefaultDialTimeout.
	DialTimeout time.Duration
	// RegisterNamespace, when not zero, registers Namespace on
	// TemporalAddress with this retention if it does not exist (kumo
	// temporal setup); otherwise a missing namespace is an error.
	RegisterNamespace time.Duration
	// Logger receives Temporal's logs; nil discards them.
	Logger *slog.Logger
	// UIBaseURL is the Temporal Web UI's address, for links to runs; empty
	// when none is known.
	UIBaseURL string
	// PagesURL is the root under which an HTTP API serves the run pages
	// (<root>/runs/<run ID>), for links to them; empty when none is known.
	PagesURL string
	// Notices receives what the client did on the user's behalf that they
	// should know of: a generator trusted on first use. Nil discards it.
	Notices io.Writer
	// CodecKeyFile holds the keys that encrypt Temporal payloads and release
	// secrets (see CodecKeys); empty: the home's for the embedded server and
	// kumo server, and for an existing cluster an error unless
	// InsecurePlaintext.
	CodecKeyFile string
	// InsecurePlaintext lets a client of an existing cluster run without a
	// codec key, Secret values in clear (PlaintextExposes); it changes nothing
	// when a key is found.
	InsecurePlaintext bool
	// CallerCredentials says that every call carries its caller's
	// credential in its context's outgoing gRPC metadata (the HTTP API's
	// callers: a bearer token, or a Web UI session cookie). The client then
	// dials the home's kumo server with the Web UI's certificate, which
	// carries no rights of its own, instead of the owner's, and never
	// starts an embedded server.
	CallerCredentials bool
}

// Client talks to the backend and, once a run needs it, to Temporal.
type Client struct {
	opts    Options
	backend backend.Backend
	keys    *keyring.Ring // nil: the codec is off

	dialMu   sync.Mutex // one dial, however many goroutines share the client
	temporal sdkclient.Client
	server   *embedded.Server
	worker   sdkworker.Worker

	attached      *server.Info // the kumo server dialled, if any
	requireServer bool
}

// GeneratorsDir is the home's generators directory: every workspace trusts
// the executables in it, since only the home's owner can put them there.
func GeneratorsDir(home string) string { return filepath.Join(absHome(home), "generators") }

// SourceCacheDir is where a worker on the home fetches git sources: one
// directory per repository and commit.
func SourceCacheDir(home string) string { return filepath.Join(absHome(home), "cache", "sources") }

// DefaultHome is $KUMO_HOME, else ~/.kumo.
func DefaultHome() string {
	if h := os.Getenv("KUMO_HOME"); h != "" {
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".kumo"
	}
	return filepath.Join(home, ".kumo")
}

// Open is OpenContext without a deadline for checking the backend.
func Open(opts Options) (*Client, error) {
	return OpenContext(context.Background(), opts)
}

// OpenContext opens (and, for S3, checks) the backend. Temporal is connected
// lazily.
func OpenContext(ctx context.Context, opts Options) (*Client, error) {
	if opts.Home == "" {
		opts.Home = DefaultHome()
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	keys, err := CodecKeys(opts)
	if err != nil {
		return nil, err
	}
	b, err := openBackend(ctx, opts, keys)
	if err != nil {
		return nil, err
	}
	return &Client{opts: opts, backend: b, keys: keys}, nil
}

// Backend is where releases live.
func (c *Client) Backend() backend.Backend { return c.backend }

// Embedded reports whether runs execute in this process: no address was
// given and the client did not attach to a kumo server.
func (c *Client) Embedded() bool { return c.opts.TemporalAddress == "" && c.attached == nil }

// connect dials Temporal, first starting the embedded server and worker if no
// address was given. Unfinished runs in the embedded database resume as soon as
// the worker starts.
func (c *Client) connect(ctx context.Context) (sdkclient.Client, error) {
	tc, err := c.dial(ctx)
	if err != nil || c.server == nil || c.worker != nil {
		return tc, err
	}
	// A one-shot command's worker runs in the process of the user who named
	// the stack: it reads the stack wherever it is. Generators still run
	// only as their workspace trusts them (see trustOnFirstUse).
	c.worker = worker.NewWithOptions(tc, c.backend, worker.Options{Generation: generate.Policy{
		AnyStackDir: true, TrustedDirs: []string{GeneratorsDir(c.opts.Home)}, SourceCache: SourceCacheDir(c.opts.Home),
	}})
	if err := c.worker.Start(); err != nil {
		c.Close()
		return nil, fmt.Errorf("start the in-process worker: %w", err)
	}
	return tc, nil
}

// Temporal is the Temporal client the Client starts its runs on, connected
// if it is not yet. A worker started on it in the same process gets the
// first workflow task of those runs with their start (eager start), as the
// one-shot commands' in-process worker does.
func (c *Client) Temporal(ctx context.Context) (sdkclient.Client, error) {
	return c.dial(ctx)
}

// dial connects to Temporal (see temporalAddress), starting the embedded
// server if that is the one to use, but no worker: for looking at runs
// without moving them on.
func (c *Client) dial(ctx context.Context) (sdkclient.Client, error) {
	c.dialMu.Lock()
	defer c.dialMu.Unlock()
	if c.temporal != nil {
		return c.temporal, nil
	}
	address, tlsCfg, err := c.temporalAddress(ctx)
	if err != nil {
		return nil, err
	}
	base := sdkclient.Options{
		HostPort: address, Namespace: c.opts.Namespace, Logger: sdklog.NewStructuredLogger(c.opts.Logger), DataConverter: c.DataConverter(),
		ConnectionOptions: sdkclient.ConnectionOptions{TLS: tlsCfg, GrpcCompression: compressionFor(address)},
		// Sends a rollout's workspaces for the frontend to decide on.
		Interceptors: []interceptor.ClientInterceptor{workflows.ClientInterceptor},
	}
	var tc sdkclient.Client
	if c.opts.TemporalAddress != "" {
		p := c.opts.Connection
		p.Address, p.Namespace = address, c.opts.Namespace
		tc, err = Dial(ctx, p, base, DialOptions{Timeout: c.opts.DialTimeout, RegisterRetention: c.opts.RegisterNamespace})
	} else if tc, err = sdkclient.DialContext(ctx, base); err != nil {
		err = fmt.Errorf("connect to Temporal at %s: %w", address, err)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.temporal = tc
	return tc, nil
}

// Close stops the in-process worker and embedded server, if any. Runs still in
// flight stay recorded and resume the next time a kumo starts the server.
func (c *Client) Close() error {
	c.disconnect()
	var err error
	if c.server != nil {
		err = c.server.Stop()
		c.server = nil
	}
	return err
}

// CloseBeforeExit is Close for a process about to exit: it stops the worker and
// the connection but leaves the embedded server to end with the process. The
// server's graceful stop buys nothing here: everything it acknowledged is
// already in its database, which is built to survive a killed process, and the
// kernel releases the lock.
func (c *Client) CloseBeforeExit() {
	c.disconnect()
}

func (c *Client) disconnect() {
	if c.worker != nil {
		c.worker.Stop()
		c.worker = nil
	}
	backend.Settle(c.backend)
	if c.temporal != nil {
		c.temporal.Close()
		c.temporal = nil
	}
}

// ErrBusy is returned when a project+workspace already has a run in progress.
var ErrBusy = errors.New("another run is in progress")

// TemporalSetup is what SetupTemporal left in place.
type TemporalSetup struct {
	Namespace  string
	Retention  time.Duration // of closed workflows in Namespace
	Attributes []runspec.SearchAttribute
}

// SetupTemporal prepares the namespace of an existing Temporal cluster for
// kumo: registers it when Options.RegisterNamespace is set and it does not
// exist, and registers kumo's search attributes in it, so its runs are
// filterable in the Web UI. It is idempotent. The embedded server does this
// by itself.
func (c *Client) SetupTemporal(ctx context.Context) (*TemporalSetup, error) {
	if c.opts.TemporalAddress == "" {
		return nil, errors.New("kumo temporal setup is for an existing Temporal cluster: pass --temporal-address (the embedded server sets itself up)")
	}
	tc, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	if err := embedded.RegisterSearchAttributes(ctx, tc, c.opts.Namespace); err != nil {
		return nil, fmt.Errorf("register search attributes in namespace %s: %w", c.opts.Namespace, err)
	}
	if err := waitAttributesServed(ctx, tc, c.opts.Namespace); err != nil {
		return nil, err
	}
	ns, err := tc.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: c.opts.Namespace})
	if err != nil {
		return nil, fmt.Errorf("describe namespace %s: %w", c.opts.Namespace, err)
	}
	return &TemporalSetup{
		Namespace: c.opts.Namespace, Retention: ns.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(),
		Attributes: runspec.SearchAttributes,
	}, nil
}
