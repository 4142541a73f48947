package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/api"
	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server"
	"github.com/kumoproj/kumo/server/bearer"
	"github.com/kumoproj/kumo/server/embedded"
)

func serverCommand() *cli.Command {
	return &cli.Command{
		Name:  "server",
		Usage: "keep Temporal, the Web UI and a worker running for this home; other kumo commands attach to it",
		Description: "Runs in the foreground until interrupted. While it runs, every kumo command on the same home\n" +
			"uses it (any number at once), runs can be started with --detach, and the Web UI shows every run\n" +
			"this home's database holds, those made before the server started included.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "address", Value: server.DefaultAddress, Usage: "host:port of the Temporal frontend"},
			&cli.StringFlag{Name: "tls-cert", Usage: "the frontend's certificate for a shared server (PEM; default: the home's own, valid for loopback only)"},
			&cli.StringFlag{Name: "tls-key", Usage: "the key of --tls-cert"},
			&cli.StringFlag{Name: "tls-client-ca", Usage: "CA of the client certificates the frontend accepts besides the home's (and that signed --tls-cert)"},
			&cli.IntFlag{Name: "quota-starts-per-minute", Value: authz.DefaultQuota.StartsPerMinute, Usage: "how many runs each subject but this home's owner may start per minute (0: no limit)"},
			&cli.IntFlag{Name: "quota-in-flight", Value: authz.DefaultQuota.InFlight, Usage: "how many runs each subject but this home's owner may have running at once (0: no limit)"},
			&cli.StringFlag{Name: "policy", Usage: "policy file granting roles on projects and workspaces to others than this home's owner (default: $KUMO_HOME/policy.yaml if it exists; without one only the owner may use the server)"},
			&cli.StringFlag{Name: "ui-address", Usage: "host:port of the Web UI (default: the frontend's host, port + 1000)"},
			&cli.BoolFlag{Name: "headless", Usage: "serve no Web UI"},
			&cli.StringFlag{Name: "codec-address", Usage: "host:port of the codec endpoint through which the Web UI shows payloads decrypted (default: 127.0.0.1, a free port; whoever reaches it can read every payload)"},
			&cli.BoolFlag{Name: "ui-write", Usage: "let the Web UI terminate, cancel, signal and start workflows (default: read-only)"},
			&cli.DurationFlag{Name: "shutdown-grace", Value: 10 * time.Second, Usage: "on shutdown, how long activities in flight may take to finish"},
			&cli.StringFlag{Name: "retention", Usage: "how long Temporal keeps closed runs (their histories and Web UI entries) before deleting them, e.g. 72h or 30d, at least 1h; set on the home's namespace (default: 7d when the namespace is created, else as it is)"},
			&cli.StringSliceFlag{Name: "stack-root", Usage: "a directory stacks given to this server must lie under, symlinks resolved (repeat for more; default: your home directory)"},
			eventsFlag(),
			planPoliciesFlag(),
			&cli.StringFlag{Name: "gc-every", Value: "1h", Usage: "how often the server removes kumo's expired and unreferenced records (a Temporal schedule, kumo-gc; --retain-* say what is kept); 0: no schedule"},
		}, append(gcFlags(), bearerFlags()...)...),
		Action: runServer,
	}
}

func runServer(c *cli.Context) error {
	if a := global(c, "temporal-address"); a != "" {
		return fmt.Errorf("kumo server runs its own Temporal; --temporal-address (or TEMPORAL_ADDRESS) %s is for commands that use an existing one", a)
	}
	for _, f := range []string{"tls-cert-path", "tls-key-path", "tls-ca-path", "tls-server-name", "api-key"} {
		if v := globalSet(c, f); v != "" {
			return fmt.Errorf("kumo server does not use --%s (%s): it is how commands reach an existing Temporal; the server's own TLS is --tls-cert, --tls-key and --tls-client-ca", f, v)
		}
	}
	tlsOpts, err := serverTLS(c)
	if err != nil {
		return err
	}
	opts := backendFlags(c)
	if opts.Namespace, err = temporalNamespace(c); err != nil {
		return err
	}
	if globalBool(c, "debug") {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.Home == "" {
		opts.Home = client.DefaultHome()
	}
	if globalSet(c, "token") != "" {
		return errors.New("kumo server does not use --token (KUMO_TOKEN): it is the credential commands send to a shared server; the server accepts tokens with --kumo-tokens and --oidc-issuer")
	}
	bearers, err := bearerConfig(c, opts.Home)
	if err != nil {
		return err
	}
	verifiers, err := bearers.Verifiers(c.Context)
	if err != nil {
		return err
	}
	sso, err := ssoConfig(c, verifiers)
	if err != nil {
		return err
	}
	var bearerVerifiers []server.BearerVerifier
	if len(verifiers) > 0 {
		bearerVerifiers = []server.BearerVerifier{bearer.Chain(verifiers...)}
	}
	retention, err := parseDays("retention", c.String("retention"))
	if err != nil {
		return err
	}
	gc, gcEvery, err := serverGC(c)
	if err != nil {
		return err
	}
	for _, f := range []string{"quota-starts-per-minute", "quota-in-flight"} {
		if c.Int(f) < 0 {
			return fmt.Errorf("--%s %d: want 0 (no limit) or more", f, c.Int(f))
		}
	}
	events, err := client.LoadEvents(absPath(c.String("events")))
	if err != nil {
		return err
	}
	planPolicies, err := loadPlanPolicies(c)
	if err != nil {
		return err
	}
	start := time.Now()
	httpAPI, apiClient, err := serverAPI(c.Context, opts, absPath(c.String("policy")))
	if err != nil {
		return err
	}
	defer apiClient.CloseBeforeExit()
	// The git webhook triggers sync schedules as the server's owner: a
	// delivery authenticates by its signature, not as a subject.
	hookClient, err := client.OpenContext(c.Context, opts)
	if err != nil {
		return err
	}
	hookClient.RequireServer()
	defer hookClient.CloseBeforeExit()
	srv, err := client.StartServer(c.Context, opts, client.ServerOptions{
		Options: server.Options{
			Address: c.String("address"), UIAddress: c.String("ui-address"), Headless: c.Bool("headless"),
			UIWrite: c.Bool("ui-write"), CodecAddress: c.String("codec-address"), TLS: tlsOpts,
			PolicyFile: absPath(c.String("policy")), SSO: sso, HTTP: httpAPI, Retention: retention, GitHook: &api.GitHook{Target: hookClient},
			Quota: authz.Quota{StartsPerMinute: c.Int("quota-starts-per-minute"), InFlight: c.Int("quota-in-flight")},
		},
		ShutdownGrace:   c.Duration("shutdown-grace"),
		StackRoots:      c.StringSlice("stack-root"),
		BearerVerifiers: bearerVerifiers,
		Events:          events,
		PlanPolicies:    planPolicies,
	})
	if err != nil {
		if errors.Is(c.Context.Err(), context.Canceled) {
			return &exitError{code: 130, err: err}
		}
		return err
	}
	if err := keepGCSchedule(c, hookClient, gc, gcEvery); err != nil {
		_ = srv.Stop()
		return err
	}
	info := srv.Info()
	fmt.Printf("kumo server (pid %d) on %s, started in %s\n", info.PID, opts.Home, time.Since(start).Round(10*time.Millisecond))
	fmt.Printf("Temporal: %s (namespace %s)\n", info.Listen, info.Namespace)
	if info.UIURL != "" {
		mode := "read-only"
		if c.Bool("ui-write") {
			mode = "with write actions"
		}
		fmt.Printf("Web UI:   %s (%s)\n", info.WorkflowsURL(""), mode)
		fmt.Printf("Log in:   %s\n          (only you can read this URL: it is also in %s; a browser without it sees no runs)\n", info.LoginURL, filepath.Join(opts.Home, server.FileName))
		if info.SSOLoginURL != "" {
			fmt.Printf("SSO:      %s (others log in through %s; it sends them back to %s, the client's redirect URI)\n", info.SSOLoginURL, bearers.OIDC.Issuer, info.SSOCallbackURL)
		}
	}
	if info.CodecURL != "" {
		fmt.Printf("Codec:    %s (payloads are encrypted with %s; the Web UI decodes them here)\n", info.CodecURL, info.CodecKeyFile)
	}
	if info.APIURL != "" {
		fmt.Printf("HTTP API: %s/api/v1 (docs %s/docs; bearer tokens, or the Web UI session)\n", info.APIURL, info.APIURL)
	}
	if bearers.KumoTokensDir != "" {
		fmt.Printf("Bearer:   kumo tokens of %s (kumo token create/list/revoke)\n", bearers.KumoTokensDir)
	}
	if bearers.OIDC != nil {
		fmt.Printf("Bearer:   OIDC tokens of %s for client %s\n", bearers.OIDC.Issuer, bearers.OIDC.ClientID)
	}
	if gcEvery > 0 {
		fmt.Printf("GC:       every %s (schedule %s): %s\n", gcEvery, runspec.GCScheduleID, gcSummary(gc))
	}
	fmt.Println("kumo commands on this home now run here, any number at once; Ctrl-C stops the server.")

	<-c.Context.Done()
	fmt.Fprintf(os.Stderr, "Stopping: activities in flight get up to %s; runs not finished continue when kumo server (or a worker) is back. Interrupt again to exit at once.\n",
		c.Duration("shutdown-grace"))
	exitOnSecondSignal()
	return srv.Stop()
}

// serverTLS is the operator's certificate given with --tls-cert, --tls-key
// and --tls-client-ca: all three or none.
func serverTLS(c *cli.Context) (*embedded.TLS, error) {
	t := &embedded.TLS{CertFile: c.String("tls-cert"), KeyFile: c.String("tls-key"), CAFile: c.String("tls-client-ca")}
	if *t == (embedded.TLS{}) {
		return nil, nil
	}
	if t.CertFile == "" || t.KeyFile == "" || t.CAFile == "" {
		return nil, errors.New("kumo server: --tls-cert, --tls-key and --tls-client-ca go together: give all three")
	}
	for _, f := range []*string{&t.CertFile, &t.KeyFile, &t.CAFile} {
		*f = absPath(*f)
	}
	return t, nil
}

// parseDays reads flag's value s as time.ParseDuration does, plus whole days
// ("30d"); empty is zero.
func parseDays(flag, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return 0, fmt.Errorf("--%s %q: want a duration such as 72h or 30d", flag, s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--%s %q: want a duration such as 72h or 30d", flag, s)
	}
	return d, nil
}
