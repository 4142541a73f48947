// Package embedded runs a single-machine Temporal server in-process for kumo.
//
// It owns everything about the embedded server: the SQLite database under a
// directory (schema created on first use), the exclusive lock that keeps two
// kumo processes from sharing that database, loopback ports, the namespace and
// kumo's search attributes, a quiet logger, and the dynamic configuration that
// makes one machine fast (see tuning.go). Everything else in kumo talks to the
// server through its Address like any other Temporal frontend. StartUI serves
// the Temporal Web UI for it (ui.go); Holder tells other processes whether a
// server holds a directory (holder.go).
package embedded

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/common/primitives/timestamp"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/internal/quietport"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/auth"
)

// PolicyFileName is the home's policy file, read when no other is named.
const PolicyFileName = "policy.yaml"

// LoadPolicy reads the policy a server on home decides with: file if
// given (it must exist), else home/policy.yaml if it exists, else the
// owner's alone.
func LoadPolicy(home, file, owner string) (*authz.Policy, error) {
	var p *authz.Policy
	var err error
	if file != "" {
		p, err = authz.Load(file, owner)
	} else {
		p, err = authz.LoadDefault(filepath.Join(home, PolicyFileName), owner)
	}
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: %w", err)
	}
	return p, nil
}

// ErrLocked is wrapped by the error Start returns when another Server (in this
// process or another one) holds the directory.
var ErrLocked = errors.New("temporal database is locked")

const (
	// DefaultNamespace is used when Options.Namespace is empty.
	DefaultNamespace = "default"
	// DefaultRetention is how long closed workflows are kept when kumo creates
	// the namespace. An existing namespace keeps its own setting.
	DefaultRetention = 7 * 24 * time.Hour
	// MinRetention is the shortest Retention, Temporal's own limit for a
	// namespace of one cluster.
	MinRetention = time.Hour

	dbFileName   = "temporal.db"
	lockFileName = "lock"
	host         = "127.0.0.1"
	clusterName  = "active"
)

// Options configures Start.
type Options struct {
	// Dir holds the database (Dir/temporal.db, created with its schema on
	// first use) and the lock file (Dir/lock). Created if missing. Required.
	Dir string
	// Namespace is registered if missing. Default "default".
	Namespace string
	// Host is the address the frontend binds to; default 127.0.0.1. The
	// other services always stay on loopback.
	Host string
	// Port is the frontend gRPC port; 0 picks a free one.
	Port int
	// Logger receives the server's logs; nil discards them. The server never
	// writes to stdout or stderr itself.
	Logger *slog.Logger
	// Retention is how long closed workflows are kept before Temporal deletes
	// them, their histories and their visibility records: set when the
	// namespace is created (default DefaultRetention) and, when not zero,
	// also on an existing namespace whose retention differs. At least
	// MinRetention.
	Retention time.Duration
	// Home is the kumo home whose PKI (Home/tls, created on first use, see
	// internal/pki) secures the server: the frontend always serves TLS and
	// requires a client certificate, and Temporal's services talk to each
	// other with mutual TLS. Default Dir.
	Home string
	// TLS, if set, is the operator's certificate, served by the frontend
	// instead of the home's (tls.go).
	TLS *TLS
	// PolicyFile grants roles to others than the home's owner (authz);
	// empty: Home/policy.yaml if it exists, else the owner alone. Every
	// frontend call is authenticated and authorized with it (server/auth).
	PolicyFile string
	// Verifiers check bearer tokens; none: bearer tokens are refused.
	Verifiers []auth.BearerVerifier
	// Sessions checks the Web UI's session cookie, which the UI server
	// forwards under its certificate; nil: the UI's calls are refused.
	Sessions auth.SessionVerifier
	// Auditor records every write decision of the frontend; nil: none.
	Auditor auth.Auditor
	// Quota limits what each subject but the home's owner may start; the
	// zero Quota: no limit.
	Quota authz.Quota

	// adminWorkflows: this package's tests run workflows of their own
	// (auth.Config.AdminWorkflows); nothing outside it can set this.
	adminWorkflows map[string]string
	// Maintenance runs Temporal's maintenance workers: the task-queue and
	// history scanners, which clean the database over hours (idle task
	// queues, such as every process's sticky queue, and orphaned history),
	// and the parent-close-policy worker. A server that lives for one
	// command does without them (the next long-lived one cleans up after
	// it): Temporal never stops their pollers, and the frontend waits out
	// its 1 s drain for them on every Stop (temporalio/temporal#11235).
	// Without the parent-close-policy worker the history service applies
	// the policy itself, as it does for a few children anyway.
	Maintenance bool
}

// Server is a running embedded Temporal server. Stop it when done.
type Server struct {
	address   string
	listen    string
	namespace string
	dir       string

	srv  temporal.Server
	lock *os.File

	pki      *pki.PKI
	roots    *x509.CertPool
	rootsPEM []byte
	ports    servicePorts

	// counter is the system's client through which the frontend counts
	// runs in flight.
	counter client.Client

	stopOnce sync.Once
	stopErr  error
}

// Address is the frontend's "127.0.0.1:port", for client.Options.HostPort.
func (s *Server) Address() string { return s.address }

// InternalAddresses are the loopback addresses of the history, matching and
// worker services, which accept only the server's own certificate: for
// tests that check nobody else gets in.
func (s *Server) InternalAddresses() []string {
	var as []string
	for _, p := range []int{s.ports.history, s.ports.matching, s.ports.worker} {
		as = append(as, net.JoinHostPort(host, strconv.Itoa(p)))
	}
	return as
}

// PKI is the home's PKI that secures the server.
func (s *Server) PKI() *pki.PKI { return s.pki }

// ClientTLS is the TLS configuration of a client presenting pair (one of
// PKI's, or another certificate the server accepts) to this server.
func (s *Server) ClientTLS(pair pki.Pair) (*tls.Config, error) {
	return s.pki.ClientTLS(pair, s.roots)
}

// RootsPEM holds the CAs a client verifies the frontend's certificate with
// (PEM): the home's, and the operator's when its certificate is served.
func (s *Server) RootsPEM() []byte { return s.rootsPEM }

// ConnectionOptions are the SDK's connection options of the home's owner:
// what a test or a program of the owner dials this server with.
func (s *Server) ConnectionOptions() (client.ConnectionOptions, error) {
	cfg, err := s.ClientTLS(s.pki.OwnerCert())
	return client.ConnectionOptions{TLS: cfg}, err
}

// ListenAddress is the address the frontend is bound to: Address, or
// "0.0.0.0:port" when it listens on every interface.
func (s *Server) ListenAddress() string { return s.listen }

// Namespace is the namespace the server was started for.
func (s *Server) Namespace() string { return s.namespace }

// Stop stops the server and releases the directory lock. It is safe to call
// more than once; later calls return the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		if s.counter != nil {
			s.counter.Close()
		}
		if s.srv != nil {
			errs = append(errs, stopServer(s.srv))
		}
		errs = append(errs, unlock(s.lock))
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// Start opens (or creates) the database under opts.Dir, starts all Temporal
// services (frontend, history, matching, worker) in this process on loopback
// ports, makes sure the namespace and kumo's search attributes exist, and
// returns once the frontend answers. ctx bounds the readiness and
// registration steps.
func Start(ctx context.Context, opts Options) (*Server, error) {
	return start(ctx, opts, fullTuning)
}

// errServerBroken is start's error when the server logged a Fatal while it
// was made: most often a port taken between picking it and listening on it.
var errServerBroken = errors.New("the server failed while it was made")

// startTries is how many times start makes the server with fresh ports when
// one of them was taken before its service listened.
const startTries = 3

// afterPickPorts, when set (tests), runs once the ports are picked.
var afterPickPorts func(servicePorts)

// start is Start with the performance tuning switchable, for benchmarks. It
// makes the server again, with fresh ports, when it broke while being made.
func start(ctx context.Context, opts Options, tune tuning) (*Server, error) {
	var err error
	for range startTries {
		var s *Server
		if s, err = startOnce(ctx, opts, tune); !errors.Is(err, errServerBroken) {
			return s, err
		}
	}
	return nil, err
}

// startOnce makes and starts the server once.
func startOnce(ctx context.Context, opts Options, tune tuning) (_ *Server, retErr error) {
	if opts.Dir == "" {
		return nil, errors.New("embedded temporal: Options.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: %w", err)
	}
	if strings.ContainsAny(dir, "?#%") {
		// The SQLite plugin builds a "file:" URI from the path without escaping.
		return nil, fmt.Errorf("embedded temporal: directory %q: path must not contain '?', '#' or '%%'", dir)
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	setRetention := opts.Retention != 0
	switch {
	case opts.Retention == 0:
		opts.Retention = DefaultRetention
	case opts.Retention < minRetention:
		return nil, fmt.Errorf("embedded temporal: retention %s: closed workflows must be kept at least %s", opts.Retention, minRetention)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded temporal: create %s: %w", dir, err)
	}

	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			_ = unlock(lock)
		}
	}()

	if opts.Host == "" {
		opts.Host = host
	}
	if opts.Home == "" {
		opts.Home = dir
	}
	var opRoots *x509.CertPool
	if opts.TLS != nil {
		if opRoots, err = opts.TLS.check(); err != nil {
			return nil, err
		}
	}
	var hosts []string
	if h := dialHost(opts.Host); h != host {
		hosts = append(hosts, h)
	}
	homePKI, err := pki.Open(opts.Home, pki.Options{Hosts: hosts})
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: %w", err)
	}
	policy, err := LoadPolicy(opts.Home, opts.PolicyFile, homePKI.Owner())
	if err != nil {
		return nil, err
	}
	gate, err := auth.New(auth.Config{PKI: homePKI, Policy: policy, Verifiers: opts.Verifiers, Sessions: opts.Sessions, Auditor: opts.Auditor, AdminWorkflows: opts.adminWorkflows, Quota: opts.Quota})
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: %w", err)
	}
	sqlCfg := sqlConfig(filepath.Join(dir, dbFileName), tune.wal)
	if err := ensureSchema(sqlCfg.DatabaseName); err != nil {
		return nil, err
	}
	if c, err := compact(sqlCfg.DatabaseName, compactMinFree); err != nil {
		// The database is as it was: VACUUM is one transaction.
		logger.Warn("embedded temporal: database not compacted", "error", err)
	} else if c.Compacted() {
		logger.Info("embedded temporal: database compacted", "path", sqlCfg.DatabaseName, "before", c.Before, "after", c.After)
	}
	if err := ensureNamespace(sqlCfg, opts.Namespace, opts.Retention); err != nil {
		return nil, err
	}

	// The ports are picked last, just before the server is made: a port
	// picked is free again until its service listens, and another program
	// may take it meanwhile (the shorter that time, the rarer).
	ports, err := pickPorts(opts.Host, opts.Port)
	if err != nil {
		return nil, err
	}
	if afterPickPorts != nil {
		afterPickPorts(ports)
	}
	address := net.JoinHostPort(dialHost(opts.Host), strconv.Itoa(ports.frontend))
	cfg := serverConfig(sqlCfg, ports, opts.Host)
	applyTLS(cfg, homePKI, opts.TLS)
	roots := rootPool(homePKI, opRoots)
	rootsPEM, err := rootFiles(homePKI, opts.TLS)
	if err != nil {
		return nil, err
	}
	// The server's own calls (readiness, search attributes) are the system's.
	systemTLS, err := homePKI.ClientTLS(homePKI.System(), roots)
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: %w", err)
	}
	dialOpts := client.ConnectionOptions{TLS: systemTLS}
	srvLogger := newServerLogger(logger)
	staticHosts := map[primitives.ServiceName]static.Hosts{}
	for svc, port := range ports.byService() {
		staticHosts[svc] = static.SingleLocalHost(net.JoinHostPort(host, strconv.Itoa(port)))
	}
	staticHosts[primitives.FrontendService] = static.SingleLocalHost(address)
	serverOpts := []temporal.ServerOption{
		temporal.WithConfig(cfg),
		temporal.ForServices(temporal.DefaultServices),
		// One process: resolve the services statically instead of running
		// ringpop membership (no membership ports, no join delay).
		temporal.WithStaticHosts(staticHosts),
		temporal.WithLogger(srvLogger),
		temporal.WithDynamicConfigClient(dynamicConfig(tune, opts.Maintenance)),
		// Every call of the frontend is authenticated and authorized; the
		// stream interceptor runs on every service, and lets the internal
		// services' own streams pass (their ports take only the internode
		// certificate).
		temporal.WithChainedFrontendGrpcInterceptors(gate.Unary),
		temporal.WithAdditionalStreamInterceptors(gate.Stream),
	}
	if len(opts.Verifiers) > 0 {
		// A bearer token is a credential of its own: a client may connect
		// without a certificate (clientauth.go), and the interceptor refuses
		// a call that has neither.
		tlsProvider, err := newCertOptional(cfg.Global.TLS, srvLogger)
		if err != nil {
			return nil, fmt.Errorf("embedded temporal: TLS: %w", err)
		}
		serverOpts = append(serverOpts, temporal.WithTLSConfigFactory(tlsProvider))
	}
	srv, err := temporal.NewServer(serverOpts...)
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: create server: %w", err)
	}
	if msg, ok := srvLogger.fatalLogged(); ok {
		// A service that could not listen (its port taken since it was
		// picked) would panic the whole process once started.
		_ = stopServer(srv)
		return nil, fmt.Errorf("embedded temporal: %w: %s", errServerBroken, msg)
	}
	if err := startServer(srv); err != nil {
		_ = stopServer(srv)
		return nil, fmt.Errorf("embedded temporal: start server: %w", err)
	}
	s := &Server{
		address:   address,
		listen:    net.JoinHostPort(opts.Host, strconv.Itoa(ports.frontend)),
		namespace: opts.Namespace,
		dir:       dir,
		srv:       srv,
		lock:      lock,
		pki:       homePKI,
		roots:     roots,
		rootsPEM:  rootsPEM,
		ports:     ports,
	}
	defer func() {
		if retErr != nil {
			_ = stopServer(srv)
		}
	}()

	// Readiness and search attributes, through the public API like any client.
	c, err := client.DialContext(ctx, client.Options{
		HostPort:          s.address,
		Namespace:         s.namespace,
		Logger:            sdklog.NewStructuredLogger(logger),
		ConnectionOptions: dialOpts,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: connect to %s: %w", s.address, err)
	}
	if err := RegisterSearchAttributes(ctx, c, s.namespace); err != nil {
		c.Close()
		return nil, fmt.Errorf("embedded temporal: %w", err)
	}
	if setRetention {
		if err := updateRetention(ctx, c, s.namespace, opts.Retention); err != nil {
			c.Close()
			return nil, fmt.Errorf("embedded temporal: %w", err)
		}
	}
	// The frontend counts a subject's runs in flight for its quota through
	// this client, as the system.
	s.counter = c
	gate.SetInFlightCounter(func(ctx context.Context, subject string) (int, error) {
		q, err := auth.InFlightQuery(subject)
		if err != nil {
			return 0, err
		}
		resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: s.namespace, Query: q})
		if err != nil {
			return 0, fmt.Errorf("count the runs of %s: %w", subject, err)
		}
		return int(resp.GetCount()), nil
	})
	return s, nil
}

// startServer turns a panic during start (the server has a few) into an error.
func startServer(srv temporal.Server) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("server panicked: %v", r)
		}
	}()
	return srv.Start()
}

func stopServer(srv temporal.Server) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("embedded temporal: stop: server panicked: %v", r)
		}
	}()
	return srv.Stop()
}

// lockDir takes an exclusive, non-blocking flock on dir/lock. flock locks
// belong to the open file, so a second Start in the same process conflicts
// too; the kernel drops the lock if the process dies.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: open lock file: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		holder := lockHolderPID(path)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Dir: dir, PID: holder}
		}
		return nil, fmt.Errorf("embedded temporal: lock %s: %w", path, err)
	}
	// Record the holder for the message above; best effort.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

func unlock(f *os.File) error {
	if f == nil {
		return nil
	}
	_ = f.Truncate(0)
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return errors.Join(err, f.Close())
}

type servicePorts struct {
	frontend, history, matching, worker int
}

func (p servicePorts) byService() map[primitives.ServiceName]int {
	return map[primitives.ServiceName]int{
		primitives.FrontendService: p.frontend,
		primitives.HistoryService:  p.history,
		primitives.MatchingService: p.matching,
		primitives.WorkerService:   p.worker,
	}
}

// pickPorts checks the frontend port is free (the server panics on a taken
// port instead of returning an error) and picks free ports for the internal
// services on loopback, and for the frontend when it is 0, where no outgoing
// connection takes them (quietport.Listen). All listeners are held until every
// port is chosen so the ports are distinct.
func pickPorts(frontendHost string, frontend int) (servicePorts, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	listen := func(host string, port int) (int, error) {
		var l net.Listener
		var err error
		if port == 0 {
			l, err = quietport.Listen(host)
		} else {
			l, err = net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		}
		if err != nil {
			return 0, err
		}
		ls = append(ls, l)
		return l.Addr().(*net.TCPAddr).Port, nil
	}
	var p servicePorts
	var err error
	if p.frontend, err = listen(frontendHost, frontend); err != nil {
		return p, fmt.Errorf("embedded temporal: frontend address %s is not available (in use by another program?): %w",
			net.JoinHostPort(frontendHost, strconv.Itoa(frontend)), err)
	}
	for _, dst := range []*int{&p.history, &p.matching, &p.worker} {
		if *dst, err = listen(host, 0); err != nil {
			return p, fmt.Errorf("embedded temporal: pick a free port: %w", err)
		}
	}
	return p, nil
}

// dialHost is where clients reach a frontend bound to host: loopback when it
// binds every interface.
func dialHost(h string) string {
	if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
		return host
	}
	return h
}

// sqlConfig is the SQLite store used for both default and visibility
// persistence.
func sqlConfig(dbPath string, wal bool) *config.SQL {
	cfg := &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: dbPath,
		ConnectAttributes: map[string]string{
			"mode": "rwc",
			// Durability trade-off: WAL with synchronous=NORMAL fsyncs only at
			// checkpoints, not on every commit. A killed or crashed kumo
			// process loses nothing (committed transactions are in the WAL
			// file, which the OS holds); a power loss or kernel crash can
			// drop the last few commits, never corrupt the database. Temporal
			// then resumes from the last durable point: a run may repeat its
			// last activities, which are idempotent by design. In exchange
			// each commit costs no fsync, which took sequential activities
			// from ~20 ms to ~9 ms each (BenchmarkSequentialActivity).
			"journal_mode": "wal",
			"synchronous":  "NORMAL",
			// Wait instead of failing if an outside reader (sqlite3 CLI,
			// backup) briefly holds the database.
			"busy_timeout": "5000",
		},
	}
	if !wal {
		delete(cfg.ConnectAttributes, "journal_mode")
		delete(cfg.ConnectAttributes, "synchronous")
	}
	return cfg
}

func serverConfig(sqlCfg *config.SQL, ports servicePorts, frontendHost string) *config.Config {
	frontendAddr := net.JoinHostPort(dialHost(frontendHost), strconv.Itoa(ports.frontend))
	const store = "sqlite-default"
	cfg := &config.Config{}
	cfg.Global.Membership = config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: host}
	// Global.Metrics nil: no-op metrics handler, nothing listening. PProf
	// port 0: disabled.
	cfg.Persistence = config.Persistence{
		DefaultStore:     store,
		VisibilityStore:  store,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{store: {SQL: sqlCfg}},
	}
	cfg.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontendAddr},
		},
	}
	cfg.DCRedirectionPolicy.Policy = "noop"
	cfg.Services = map[string]config.Service{}
	for svc, port := range ports.byService() {
		// HTTPPort stays 0: the frontend's HTTP API is off.
		cfg.Services[string(svc)] = config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: host}}
	}
	cfg.Services[string(primitives.FrontendService)] = config.Service{RPC: config.RPC{GRPCPort: ports.frontend, BindOnIP: frontendHost}}
	cfg.Archival.History.State = "disabled"
	cfg.Archival.Visibility.State = "disabled"
	cfg.NamespaceDefaults.Archival.History.State = "disabled"
	cfg.NamespaceDefaults.Archival.Visibility.State = "disabled"
	// The server's own worker service connects here.
	cfg.PublicClient.HostPort = frontendAddr
	return cfg
}

// ensureNamespace registers the namespace directly in the database before the
// server starts, so it is usable at once (registering through the API would
// wait for the namespace cache to refresh). kumo's search attributes are
// assigned at creation; RegisterSearchAttributes adds any that an older
// namespace lacks. An existing namespace is left as it is.
func ensureNamespace(sqlCfg *config.SQL, name string, retention time.Duration) error {
	sas := make(map[string]enumspb.IndexedValueType, len(runspec.SearchAttributes))
	for _, sa := range runspec.SearchAttributes {
		t, err := valueType(sa)
		if err != nil {
			return err
		}
		sas[sa.Name] = t
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, name, false, sas)
	if err != nil {
		return fmt.Errorf("embedded temporal: namespace %q: %w", name, err)
	}
	ns.Detail.Config.Retention = timestamp.DurationPtr(retention)
	if err := sqliteschema.CreateNamespaces(sqlCfg, ns); err != nil {
		return fmt.Errorf("embedded temporal: register namespace %q: %w", name, err)
	}
	return nil
}
