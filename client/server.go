package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/server/embedded"
	"github.com/kumoproj/kumo/worker"
)

// Defaults of `kumo server`, the Temporal CLI's dev server's: the UI listens
// on the frontend's port + uiPortOffset.
const (
	DefaultServerAddress = "127.0.0.1:7233"
	uiPortOffset         = 1000
)

// ServerOptions configure StartServer.
type ServerOptions struct {
	// Address is the Temporal frontend's host:port; default
	// DefaultServerAddress. Port 0 picks a free one.
	Address string
	// UIAddress is the Web UI's host:port; default the frontend's host and
	// port + 1000 (a free port if the frontend's was 0).
	UIAddress string
	// Headless serves no Web UI.
	Headless bool
	// UIWrite enables the UI's terminate, cancel, signal, reset and start
	// buttons; by default it only shows.
	UIWrite bool
	// ShutdownGrace is how long Stop lets activities in flight finish.
	ShutdownGrace time.Duration
	// CodecAddress is the host:port of the codec endpoint the Web UI decodes
	// payloads with; default loopback, any free port.
	CodecAddress string
}

// Server is a running `kumo server`: the home's embedded Temporal server, the
// Web UI and a worker, announced in $KUMO_HOME/server.json.
type Server struct {
	info ServerInfo
	home string

	temporal *embedded.Server
	ui       *embedded.UI
	codec    *codecServer
	tc       sdkclient.Client
	worker   sdkworker.Worker
}

// Info is what the server recorded in server.json.
func (s *Server) Info() ServerInfo { return s.info }

// StartServer starts Temporal on the home's database, a worker, and the Web
// UI, then records them in $KUMO_HOME/server.json so that other kumo commands
// attach instead of starting their own. Runs left unfinished in the database
// (by a killed server or one-shot command) resume as soon as the worker polls.
func StartServer(ctx context.Context, opts Options, so ServerOptions) (_ *Server, retErr error) {
	c, err := OpenContext(ctx, opts) // defaults, and the backend the worker uses
	if err != nil {
		return nil, err
	}
	opts = c.opts
	home := absHome(opts.Home)
	if info, err := LiveServer(home); err != nil {
		return nil, err
	} else if info != nil {
		return nil, fmt.Errorf("a kumo server (pid %d) is already running on %s, at %s: its runs are every kumo command's on this home", info.PID, home, info.Address)
	}
	if so.Address == "" {
		so.Address = DefaultServerAddress
	}
	host, port, err := splitAddress("--address", so.Address)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("kumo home: %w", err)
	}

	s := &Server{home: home}
	defer func() {
		if retErr != nil {
			_ = s.Stop()
		}
	}()
	s.temporal, err = embedded.Start(ctx, embedded.Options{
		Dir: temporalDir(home), Namespace: opts.Namespace, Host: host, Port: port, Logger: opts.Logger,
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
	s.tc, err = sdkclient.DialContext(ctx, sdkclient.Options{
		HostPort: s.temporal.Address(), Namespace: opts.Namespace, Logger: sdklog.NewStructuredLogger(opts.Logger),
		DataConverter: c.DataConverter(),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", s.temporal.Address(), err)
	}
	s.worker = worker.NewWithOptions(s.tc, c.backend, worker.Options{StopTimeout: so.ShutdownGrace})
	if err := s.worker.Start(); err != nil {
		s.worker = nil
		return nil, fmt.Errorf("start the worker: %w", err)
	}
	s.info = ServerInfo{
		PID: os.Getpid(), Address: s.temporal.Address(), Namespace: opts.Namespace, Backend: opts.Backend, Started: time.Now().UTC(),
		CodecKeyFile: keyFile(c.keys),
	}
	if c.keys != nil {
		if so.CodecAddress == "" {
			so.CodecAddress = "127.0.0.1:0"
		}
		if s.codec, err = startCodecServer(so.CodecAddress, c.keys); err != nil {
			return nil, err
		}
		s.info.CodecURL = s.codec.url
	}
	if !so.Headless {
		uiAddress, err := uiAddress(so.UIAddress, host, port, s.temporal.Address())
		if err != nil {
			return nil, err
		}
		s.ui, err = embedded.StartUI(ctx, embedded.UIOptions{
			Address: uiAddress, TemporalAddress: s.temporal.Address(), Namespace: opts.Namespace, Write: so.UIWrite,
			CodecEndpoint: s.info.CodecURL,
		})
		if err != nil {
			return nil, err
		}
		s.info.UIURL = s.ui.URL()
		if s.codec != nil {
			s.codec.allowUI(s.ui.URL())
		}
	}
	if err := writeServerInfo(home, s.info); err != nil {
		return nil, fmt.Errorf("record the server: %w", err)
	}
	return s, nil
}

// Stop stops taking work: server.json goes first, so no new command attaches;
// then the worker stops polling and waits up to the shutdown grace for its
// activities; then the UI and Temporal stop. Runs still in flight stay in the
// database and continue when a server or worker is back.
func (s *Server) Stop() error {
	var errs []error
	if s.info.PID != 0 {
		errs = append(errs, removeServerInfo(s.home))
	}
	if s.worker != nil {
		s.worker.Stop()
	}
	if s.ui != nil {
		s.ui.Stop()
	}
	if s.codec != nil {
		s.codec.stop()
	}
	if s.tc != nil {
		s.tc.Close()
	}
	if s.temporal != nil {
		errs = append(errs, s.temporal.Stop())
	}
	return errors.Join(errs...)
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
		return "", 0, fmt.Errorf("%s %q: want host:port, e.g. %s", flag, address, DefaultServerAddress)
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
