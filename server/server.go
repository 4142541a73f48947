// Package server is `kumo server`: a kumo home's Temporal kept running in one
// process, with the Temporal Web UI, the codec endpoint through which the UI
// shows payloads decrypted (codec.go), and a worker, recorded in
// $KUMO_HOME/server.json so that every other kumo command on that home
// attaches to it instead of starting its own (info.go: Live).
//
// It sits beside client, not inside it, the way the Temporal CLI keeps its dev
// server apart from its client: this package is about one machine's
// processes, ports, locks and files; the client is about runs, and reaches a
// server only through the address the record holds. The Temporal server itself
// (SQLite, schema, search attributes, tuning, Web UI, TLS) is the sub-package
// embedded, which one-shot commands, tests and benchmarks start on its own,
// without a record or a UI. Neither imports client, worker or workflows: the
// worker comes in through Config.StartWorker.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/internal/keyring"
	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/auth"
	"github.com/kumoproj/kumo/server/embedded"
)

// Defaults of `kumo server`, the Temporal CLI's dev server's: the UI listens
// on the frontend's port + uiPortOffset.
const (
	DefaultAddress = "127.0.0.1:7233"
	uiPortOffset   = 1000
)

// Config is what the server serves, as the kumo client that starts it opened
// the home: whose database, which namespace, the keys of its payloads, and the
// worker that runs its runs.
type Config struct {
	// Home is the kumo home: its Temporal database, and where the server
	// records itself.
	Home      string
	Namespace string
	// Logger receives Temporal's logs.
	Logger *slog.Logger
	// Backend is where the worker keeps releases (empty: the home), recorded
	// so that a command with another backend refuses to attach.
	Backend string
	// CodecKeys encrypt the payloads; nil: the codec is off and no codec
	// endpoint is served.
	CodecKeys *keyring.Ring
	// StartWorker (required) starts the worker once Temporal listens at address, before
	// the server records itself: a command that attaches finds its runs
	// served. Stop calls the stop it returns before stopping Temporal.
	//
	// The worker dials with tls: the home owner's client certificate (the
	// owner is a worker principal) and the CAs of the frontend.
	StartWorker func(ctx context.Context, address string, tls *tls.Config) (stop func(), err error)
	// BearerVerifiers accept bearer credentials (OIDC tokens, tokens kumo
	// issued) at the codec endpoint; none: only the owner's browser session.
	BearerVerifiers []BearerVerifier
}

// Options say where the server listens and what its Web UI may do.
type Options struct {
	// Address is the Temporal frontend's host:port; default DefaultAddress.
	// Port 0 picks a free one.
	Address string
	// UIAddress is the Web UI's host:port; default the frontend's host and
	// port + 1000 (a free port if the frontend's was 0).
	UIAddress string
	// Headless serves no Web UI.
	Headless bool
	// UIWrite enables the UI's terminate, cancel, signal, reset and start
	// buttons; by default it only shows.
	UIWrite bool
	// TLS is the operator's certificate for a shared server, served instead
	// of the home's (embedded.TLS); nil: the home's PKI only.
	TLS *embedded.TLS
	// PolicyFile grants roles to others than the home's owner; empty:
	// $KUMO_HOME/policy.yaml if it exists (embedded.LoadPolicy).
	PolicyFile string
	// Quota limits what each subject but the home's owner may start.
	Quota authz.Quota
	// Retention is how long closed runs are kept (embedded.Options.Retention);
	// zero: the namespace's own.
	Retention time.Duration
	// Auditor records the frontend's write decisions; nil: none.
	Auditor auth.Auditor
	// CodecAddress is the host:port of the codec endpoint the Web UI decodes
	// payloads with; default loopback, any free port.
	CodecAddress string
	// SSO, if set, lets people log in to the Web UI through the OIDC
	// issuer (ssologin.go); without it only the home's owner can, with the
	// login URL.
	SSO *SSO
	// HTTP is kumo's HTTP API, its docs and run pages, served by the web
	// endpoint beside /login and the codec: /api/, /openapi.json, /docs and
	// /runs/ go to it, each request carrying the endpoint's authenticator
	// (RequestAuthenticator). nil: none.
	HTTP http.Handler
	// GitHook serves POST /hooks/git (GitHook) on the same endpoint; its
	// requests authenticate by their signature, not as a subject. nil: none.
	GitHook http.Handler
}

// Server is a running `kumo server`: the home's embedded Temporal server, the
// Web UI and a worker, announced in $KUMO_HOME/server.json.
type Server struct {
	info Info
	home string

	temporal   *embedded.Server
	ui         *embedded.UI
	web        *webEndpoint
	stopWorker func()
	// stopMemory stops returning the free heap after large runs (memory.go).
	stopMemory func()
}

// Info is what the server recorded in server.json.
func (s *Server) Info() Info { return s.info }

// Start starts Temporal on the home's database, the worker, and the Web UI,
// then records them in $KUMO_HOME/server.json so that other kumo commands
// attach instead of starting their own. Runs left unfinished in the database
// (by a killed server or one-shot command) resume as soon as the worker polls.
func Start(ctx context.Context, cfg Config, opts Options) (_ *Server, retErr error) {
	home := cfg.Home
	if info, err := Live(home); err != nil {
		return nil, err
	} else if info != nil {
		return nil, fmt.Errorf("a kumo server (pid %d) is already running on %s, at %s: its runs are every kumo command's on this home", info.PID, home, info.Address)
	}
	if opts.Address == "" {
		opts.Address = DefaultAddress
	}
	host, port, err := splitAddress("--address", opts.Address)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("kumo home: %w", err)
	}
	if opts.TLS != nil {
		if err := opts.TLS.Check(); err != nil {
			return nil, err
		}
	}
	if opts.SSO != nil && opts.Headless {
		return nil, errors.New("the Web UI's single sign-on (an OIDC client secret) was given, but --headless serves no Web UI: drop one of them")
	}
	if err := checkExposure(home, host, opts, cfg.BearerVerifiers); err != nil {
		return nil, err
	}
	if err := checkHTTPExposure(opts); err != nil {
		return nil, err
	}

	s := &Server{home: home}
	defer func() {
		if retErr != nil {
			_ = s.Stop()
		}
	}()
	// The Web UI's sessions: the frontend takes the session cookie the UI
	// server forwards as its user's credential.
	owner, err := pki.HomeOwner(home)
	if err != nil {
		return nil, err
	}
	sessions, err := NewSessions(runspec.Subject{Name: owner})
	if err != nil {
		return nil, err
	}
	s.temporal, err = embedded.Start(ctx, embedded.Options{
		Dir: TemporalDir(home), Home: home, Namespace: cfg.Namespace, Host: host, Port: port, Logger: cfg.Logger, TLS: opts.TLS,
		PolicyFile: opts.PolicyFile, Verifiers: cfg.BearerVerifiers, Sessions: sessions, Auditor: opts.Auditor, Quota: opts.Quota, Retention: opts.Retention,
		// It keeps running: it cleans the database up, for the one-shot
		// commands too.
		Maintenance: true,
	})
	if err != nil {
		var locked *embedded.LockedError
		if errors.As(err, &locked) {
			return nil, fmt.Errorf("another kumo command%s is using %s; start kumo server when it has finished", locked.Holder(), home)
		}
		return nil, err
	}
	ownerTLS, err := s.temporal.ClientTLS(s.temporal.PKI().OwnerCert())
	if err != nil {
		return nil, err
	}
	if s.stopWorker, err = cfg.StartWorker(ctx, s.temporal.Address(), ownerTLS); err != nil {
		return nil, err
	}
	s.stopMemory = startReturningMemory(memoryCheckInterval, memoryFreeThreshold)
	s.info = Info{
		PID: os.Getpid(), Address: s.temporal.Address(), Listen: s.temporal.ListenAddress(), Namespace: cfg.Namespace, Backend: cfg.Backend, Started: time.Now().UTC(),
	}
	if opts.TLS != nil {
		s.info.TLSCAFile = opts.TLS.CAFile
	}
	if cfg.CodecKeys != nil || !opts.Headless || opts.HTTP != nil || opts.GitHook != nil {
		if s.web, err = s.startWeb(cfg, opts, sessions); err != nil {
			return nil, err
		}
	}
	if !opts.Headless {
		uiAddress, err := uiAddress(opts.UIAddress, host, port, s.temporal.Address())
		if err != nil {
			return nil, err
		}
		s.ui, err = embedded.StartUI(ctx, embedded.UIOptions{
			Address: uiAddress, TemporalAddress: s.temporal.Address(), Namespace: cfg.Namespace, Write: opts.UIWrite,
			CodecEndpoint: s.info.CodecURL, Certificate: s.temporal.PKI().UI(), RootsPEM: s.temporal.RootsPEM(),
			// The browser's session cookie goes to the frontend with every
			// call the UI makes for it, and to the codec endpoint.
			ForwardHeaders: []string{"cookie"},
		})
		if err != nil {
			return nil, err
		}
		s.info.UIURL = s.ui.URL()
		s.web.allowUI(s.ui.URL(), s.info.WorkflowsURL(""))
		s.info.LoginURL = s.web.sessions.LoginURL(s.web.url, s.info.WorkflowsURL(""))
		if s.web.sso != nil {
			s.info.SSOLoginURL = s.web.url + SSOLoginPath
			s.info.SSOCallbackURL = s.web.sso.RedirectURL()
		}
	}
	if err := writeInfo(home, s.info); err != nil {
		return nil, fmt.Errorf("record the server: %w", err)
	}
	return s, nil
}

// Stop stops taking work: server.json goes first, so no new command attaches;
// then the worker stops (waiting for its activities as long as it was told);
// then the UI and Temporal stop. Runs still in flight stay in the database and
// continue when a server or worker is back.
func (s *Server) Stop() error {
	var errs []error
	if s.info.PID != 0 {
		errs = append(errs, removeInfo(s.home))
	}
	if s.stopWorker != nil {
		s.stopWorker()
	}
	if s.stopMemory != nil {
		s.stopMemory()
		s.stopMemory = nil
	}
	if s.ui != nil {
		s.ui.Stop()
	}
	if s.web != nil {
		s.web.stop()
	}
	if s.temporal != nil {
		errs = append(errs, s.temporal.Stop())
	}
	return errors.Join(errs...)
}

// startWeb starts the web endpoint: the UI's login and, with codec keys, the
// codec.
func (s *Server) startWeb(cfg Config, opts Options, sessions *Sessions) (*webEndpoint, error) {
	if opts.CodecAddress == "" {
		opts.CodecAddress = "127.0.0.1:0"
	}
	web, err := startWebEndpoint(opts.CodecAddress, sessions, cfg.CodecKeys, cfg.BearerVerifiers, opts.SSO, opts.HTTP)
	if err != nil {
		return nil, err
	}
	web.hook = opts.GitHook
	if opts.HTTP != nil {
		s.info.APIURL = web.url
	}
	if cfg.CodecKeys != nil {
		s.info.CodecKeyFile = cfg.CodecKeys.Path()
		s.info.CodecURL = web.url
	}
	return web, nil
}

// checkExposure refuses to listen beyond loopback without what keeps
// strangers out and lets others in: a certificate the operator gives (the
// home's is valid for loopback only), and a way to authenticate someone
// other than the home's owner (a policy granting someone, or bearer
// verifiers).
func checkExposure(home, host string, opts Options, verifiers []BearerVerifier) error {
	if isLoopback(host) {
		return nil
	}
	if opts.TLS == nil {
		return fmt.Errorf("--address %s listens beyond this machine: add --tls-cert, --tls-key and --tls-client-ca (a certificate for the names clients dial, and the CA of their certificates) and a policy granting roles (--policy, or %s)",
			opts.Address, filepath.Join(home, embedded.PolicyFileName))
	}
	if len(verifiers) > 0 {
		return nil
	}
	p, err := pki.Open(home, pki.Options{})
	if err != nil {
		return err
	}
	policy, err := embedded.LoadPolicy(home, opts.PolicyFile, p.Owner())
	if err != nil {
		return err
	}
	if !policy.GrantsOthers() {
		return fmt.Errorf("--address %s listens beyond this machine, but nobody besides %s may use it: add a policy granting roles to the subjects of your clients' certificates (--policy, or %s)",
			opts.Address, p.Owner(), filepath.Join(home, embedded.PolicyFileName))
	}
	return nil
}

// checkHTTPExposure refuses to serve the HTTP API beyond loopback: the web
// endpoint speaks plain HTTP, and API requests carry credentials.
func checkHTTPExposure(opts Options) error {
	if opts.HTTP == nil || opts.CodecAddress == "" {
		return nil // the default is loopback
	}
	host, _, err := splitAddress("--codec-address", opts.CodecAddress)
	if err != nil {
		return err
	}
	if !isLoopback(host) {
		return fmt.Errorf("--codec-address %s listens beyond this machine, and it serves the HTTP API over plain HTTP, whose requests carry credentials: keep it on loopback and put a TLS-terminating proxy in front", opts.CodecAddress)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// uiAddress is the UI's address: the one given, else the frontend's host and
// port + 1000 (any free port when the frontend's was picked).
func uiAddress(given, host string, port int, frontend string) (string, error) {
	if given != "" {
		if _, _, err := splitAddress("--ui-address", given); err != nil {
			return "", err
		}
		return given, nil
	}
	if port == 0 {
		return net.JoinHostPort(host, "0"), nil
	}
	_, p, _ := net.SplitHostPort(frontend)
	n, _ := strconv.Atoi(p)
	return net.JoinHostPort(host, strconv.Itoa(n+uiPortOffset)), nil
}

// splitAddress parses host:port; an empty host is loopback.
func splitAddress(flag, address string) (string, int, error) {
	host, p, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, fmt.Errorf("%s %q: want host:port, e.g. %s", flag, address, DefaultAddress)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%s %q: port %q is not a number from 0 to 65535", flag, address, p)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return host, port, nil
}
