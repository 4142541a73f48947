package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/api"
	"github.com/kumoproj/kumo/api/runpage"
	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/server"
	"github.com/kumoproj/kumo/server/bearer"
	"github.com/kumoproj/kumo/server/embedded"
)

// serverAPI is the HTTP API kumo server serves on its web endpoint: a
// client that calls the server's own frontend as each caller (with the Web
// UI's certificate, which carries no rights of its own, and the caller's
// credential), deciding with the server's policy first.
func serverAPI(ctx context.Context, opts client.Options, policyFile string) (*api.API, *client.Client, error) {
	p, err := pki.Open(opts.Home, pki.Options{})
	if err != nil {
		return nil, nil, err
	}
	policy, err := embedded.LoadPolicy(opts.Home, policyFile, p.Owner())
	if err != nil {
		return nil, nil, err
	}
	opts.CallerCredentials = true
	kc, err := client.OpenContext(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	a, err := api.New(api.Options{Client: kc, Policy: policy, ForwardCredentials: true, Pages: runPages(kc, policy)})
	if err != nil {
		kc.Close()
		return nil, nil, err
	}
	return a, kc, nil
}

// apiDefaultAddress is where `kumo api` listens by default.
const apiDefaultAddress = "127.0.0.1:7280"

func apiCommand() *cli.Command {
	return &cli.Command{
		Name:  "api",
		Usage: "serve kumo's HTTP API (/api/v1, /openapi.json, /docs) against an existing Temporal cluster (TEMPORAL_ADDRESS or --temporal-address)",
		Description: "For fleets: kumo server serves the same API itself. Callers authenticate with bearer credentials\n" +
			"(--kumo-tokens, --oidc-issuer); what each may do is the policy's (--policy, or $KUMO_HOME/policy.yaml),\n" +
			"decided here before any call, since the cluster authenticates this process, not its callers.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "address", Value: apiDefaultAddress, Usage: "host:port to listen on; beyond loopback only with --tls-cert and --tls-key"},
			&cli.StringFlag{Name: "tls-cert", Usage: "certificate to serve HTTPS with (PEM)"},
			&cli.StringFlag{Name: "tls-key", Usage: "the key of --tls-cert"},
			&cli.StringFlag{Name: "policy", Usage: "policy file granting roles on projects and workspaces (default: $KUMO_HOME/policy.yaml)"},
		}, bearerFlags()...),
		Action: runAPI,
	}
}

func runAPI(c *cli.Context) error {
	conn, err := connection(c)
	if err != nil {
		return err
	}
	if conn.Address == "" {
		return errors.New("kumo api needs --temporal-address (or TEMPORAL_ADDRESS, or a temporal CLI profile with an address); kumo server serves the API itself")
	}
	opts := backendFlags(c)
	opts.TemporalAddress, opts.Namespace, opts.Connection = conn.Address, conn.Namespace, conn
	opts.UIBaseURL = global(c, "ui-url")
	if opts.Home == "" {
		opts.Home = client.DefaultHome()
	}
	address := c.String("address")
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("--address %q: want host:port, e.g. %s", address, apiDefaultAddress)
	}
	certFile, keyFile := c.String("tls-cert"), c.String("tls-key")
	if (certFile == "") != (keyFile == "") {
		return errors.New("kumo api: --tls-cert and --tls-key go together: give both")
	}
	if ip := net.ParseIP(host); certFile == "" && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--address %s listens beyond this machine: requests carry credentials, so add --tls-cert and --tls-key", address)
	}
	bearers, err := bearerConfig(c, opts.Home)
	if err != nil {
		return err
	}
	verifiers, err := bearers.Verifiers(c.Context)
	if err != nil {
		return err
	}
	if len(verifiers) == 0 {
		return errors.New("kumo api authenticates callers with bearer credentials: add --kumo-tokens or --oidc-issuer")
	}
	owner, err := pki.HomeOwner(opts.Home)
	if err != nil {
		return err
	}
	policy, err := embedded.LoadPolicy(opts.Home, absPath(c.String("policy")), owner)
	if err != nil {
		return err
	}
	if !policy.GrantsOthers() {
		return fmt.Errorf("kumo api: the policy grants nobody a role, so no caller could do anything: grant roles with --policy (or %s)", filepath.Join(opts.Home, embedded.PolicyFileName))
	}
	kc, err := client.OpenContext(c.Context, opts)
	if err != nil {
		return err
	}
	defer kc.CloseBeforeExit()
	h, err := api.New(api.Options{Client: kc, Policy: policy, Authenticate: server.BearerAuthenticator([]server.BearerVerifier{bearer.Chain(verifiers...)}),
		Pages: runPages(kc, policy)})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("--address %s: %w", address, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	if certFile != "" {
		scheme = "https"
	}
	fmt.Printf("kumo api on %s://%s (Temporal %s, namespace %s): %s/api/v1, docs %s/docs\n",
		scheme, l.Addr(), conn.Address, conn.Namespace, scheme+"://"+l.Addr().String(), scheme+"://"+l.Addr().String())
	done := make(chan error, 1)
	go func() {
		if certFile != "" {
			done <- srv.ServeTLS(l, certFile, keyFile)
		} else {
			done <- srv.Serve(l)
		}
	}()
	select {
	case err := <-done:
		return err
	case <-c.Context.Done():
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Fprintln(os.Stderr, "Stopping kumo api.")
	return srv.Shutdown(ctx)
}

// runPages are the run pages the HTTP API serves under /runs/: a run's page
// is shown to a caller the API authenticated who may view its project and
// workspace (the release is read from the backend, which does not know the
// caller, only after the policy allows it).
func runPages(kc *client.Client, policy *authz.Policy) http.Handler {
	return runpage.New(runpage.ClientSource(kc, func(ctx context.Context, project, workspace string) error {
		s, ok := api.Caller(ctx)
		if !ok {
			return errors.New("run pages are served only behind the HTTP API's authentication")
		}
		return policy.Decide(authz.Subject{Name: s.Name, Groups: s.Groups}, authz.Show, project, workspace)
	}))
}
