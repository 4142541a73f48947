package embedded

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kumoproj/kumo/internal/pki"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"github.com/temporalio/ui-server/v2/server/server_options"
)

// UIOptions configures StartUI.
type UIOptions struct {
	// Address is host:port to serve on; port 0 picks a free one.
	Address string
	// TemporalAddress is the frontend the UI talks to (gRPC).
	TemporalAddress string
	Namespace       string
	// Write enables the UI's write actions (terminate, cancel, signal, reset,
	// start, batch operations). Off, the UI only shows.
	Write bool
	// Certificate is the UI server's client certificate for the frontend
	// (the home's "ui" certificate: a transport identity with no rights of
	// its own), and RootsPEM the CAs it verifies the frontend with (Server.RootsPEM).
	Certificate pki.Pair
	RootsPEM    []byte
	// CodecEndpoint is the codec server the UI sends payloads to for decoding
	// (from the browser); empty: payloads show as stored.
	CodecEndpoint string
	// ForwardHeaders are the browser's request headers the UI server passes
	// on to the frontend as gRPC metadata with every call (kumo's session
	// cookie, by which the frontend knows whose call it is).
	ForwardHeaders []string
}

// UI is the Temporal Web UI (the ui-server module, whose assets are compiled
// in) serving one Temporal frontend.
type UI struct {
	url string
	srv *uiserver.Server
	end chan struct{}
}

// URL is the UI's root, "http://host:port".
func (u *UI) URL() string { return u.url }

// Stop closes the UI's listener and its connections.
func (u *UI) Stop() {
	u.srv.Stop()
	<-u.end
}

// StartUI serves the Web UI and returns once it answers its health check.
//
// The UI server has no way to take a listener or to report a taken port (it
// exits the process instead), so the address is checked first; a program that
// grabs the port in between still ends the process.
func StartUI(ctx context.Context, opts UIOptions) (*UI, error) {
	h, _, err := net.SplitHostPort(opts.Address)
	if err != nil {
		return nil, fmt.Errorf("web UI address %q: %w", opts.Address, err)
	}
	l, err := net.Listen("tcp", opts.Address)
	if err != nil {
		return nil, fmt.Errorf("web UI address %s is not available (in use by another program?): %w", opts.Address, err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	cfg := &uiconfig.Config{
		Host:                h,
		Port:                port,
		TemporalGRPCAddress: opts.TemporalAddress,
		EnableUI:            true,
		DefaultNamespace:    opts.Namespace,
		DisableNewsFetch:    true,
		HideLogs:            true,
		// Plain HTTP on loopback: a CSRF cookie marked Secure would never
		// come back, and every write would be refused.
		CORS:                uiconfig.CORS{CookieInsecure: true},
		DisableWriteActions: !opts.Write,
	}
	if opts.Certificate.CertFile == "" || len(opts.RootsPEM) == 0 {
		return nil, errors.New("web UI: no client certificate or CA for the Temporal frontend, which requires them")
	}
	cfg.TLS = uiconfig.TLS{
		CertFile: opts.Certificate.CertFile, KeyFile: opts.Certificate.KeyFile,
		CaData: base64.StdEncoding.EncodeToString(opts.RootsPEM), EnableHostVerification: true,
	}
	cfg.Codec.Endpoint = opts.CodecEndpoint
	// The browser sends its session cookie to the codec endpoint, which
	// answers nobody without one.
	cfg.Codec.IncludeCredentials = opts.CodecEndpoint != ""
	cfg.ForwardHeaders = opts.ForwardHeaders
	if !opts.Write {
		cfg.WorkflowTerminateDisabled, cfg.WorkflowCancelDisabled, cfg.WorkflowSignalDisabled = true, true, true
		cfg.WorkflowUpdateDisabled, cfg.WorkflowResetDisabled, cfg.WorkflowPauseDisabled = true, true, true
		cfg.BatchActionsDisabled, cfg.StartWorkflowDisabled, cfg.ActivityCommandsDisabled = true, true, true
	}
	var srv *uiserver.Server
	if err := noPanic(func() { srv = uiserver.NewServer(server_options.WithConfigProvider(cfg)) }); err != nil {
		return nil, fmt.Errorf("web UI: %w", err)
	}
	u := &UI{
		url: (&url.URL{Scheme: "http", Host: net.JoinHostPort(dialHost(h), strconv.Itoa(port))}).String(),
		srv: srv,
		end: make(chan struct{}),
	}
	go func() {
		defer close(u.end)
		_ = srv.Start() // returns when Stop closes the server
	}()
	if err := u.waitHealthy(ctx); err != nil {
		u.Stop()
		return nil, fmt.Errorf("web UI on %s: %w", opts.Address, err)
	}
	return u, nil
}

// waitHealthy polls /healthz until it answers 200.
func (u *UI) waitHealthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.url+"/healthz", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-u.end:
			return errors.New("the UI server stopped")
		case <-ctx.Done():
			return fmt.Errorf("not answering: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func noPanic(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}
