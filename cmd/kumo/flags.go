package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"go.temporal.io/sdk/contrib/envconfig"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/runspec"
)

func commonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "project", Usage: "project name (default: name in the nearest project.yaml, else the current directory's name)", EnvVars: []string{"KUMO_PROJECT"}},
		&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "target workspace (default: the one kumo workspace switch chose, else default)", EnvVars: []string{"KUMO_WORKSPACE"}},
		&cli.StringFlag{Name: "kubeconfig", Usage: "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)"},
		&cli.StringFlag{Name: "context", Usage: "kubeconfig context"},
		&cli.StringFlag{Name: "temporal-address", Usage: "host:port of an existing Temporal cluster (default: the kumo server running on --home, else an embedded server for this command)", EnvVars: []string{"TEMPORAL_ADDRESS"}},
		&cli.StringFlag{Name: "temporal-namespace", Value: "default", Usage: "Temporal namespace", EnvVars: []string{"TEMPORAL_NAMESPACE"}},
		&cli.StringFlag{Name: "namespace", Aliases: []string{"n"}, Usage: "Kubernetes namespace for objects of plain manifests that have none (apply, preview, spec convert; default: the kubeconfig context's, else default)"},
		&cli.StringFlag{Name: "ui-url", Usage: "address of the Temporal Web UI, for links to runs (e.g. http://localhost:8233)", EnvVars: []string{"KUMO_UI_URL"}},
		&cli.StringFlag{Name: "api-key", Usage: "API key for the Temporal cluster (default: $TEMPORAL_API_KEY, else the profile's)"},
		&cli.StringFlag{Name: "token", Usage: "bearer token for a shared kumo server: a kumo token (kumo token create) or an OIDC ID token, sent as --api-key is (over TLS)", EnvVars: []string{"KUMO_TOKEN"}},
		&cli.StringFlag{Name: "tls-cert-path", Usage: "client certificate for mTLS with Temporal (default: $TEMPORAL_TLS_CLIENT_CERT_PATH or _DATA, else the profile's)"},
		&cli.StringFlag{Name: "tls-key-path", Usage: "client key for mTLS with Temporal (default: $TEMPORAL_TLS_CLIENT_KEY_PATH or _DATA, else the profile's)"},
		&cli.StringFlag{Name: "tls-ca-path", Usage: "CA that signed Temporal's server certificate (default: $TEMPORAL_TLS_SERVER_CA_CERT_PATH or _DATA, else the profile's, else the system's)"},
		&cli.StringFlag{Name: "tls-server-name", Usage: "name to verify Temporal's certificate against (default: $TEMPORAL_TLS_SERVER_NAME, else the host of the address)"},
		&cli.StringFlag{Name: "profile", Usage: "profile of the temporal CLI's config file to connect with (default: $TEMPORAL_PROFILE, else default)"},
		&cli.StringFlag{Name: "temporal-config-file", Usage: "the temporal CLI's config file (default: $TEMPORAL_CONFIG_FILE, else temporalio/temporal.toml in the user's config directory)"},
		&cli.StringFlag{Name: "home", Usage: "kumo's data directory (default: $KUMO_HOME, else ~/.kumo)", EnvVars: []string{"KUMO_HOME"}},
		&cli.StringFlag{Name: "backend", Usage: "where releases, state, workspaces and run logs live: s3://bucket[/prefix], postgres://user@host/database, https://state-service/path or file:///dir (default: backend in the nearest project.yaml, else --home)", EnvVars: []string{"KUMO_BACKEND"}},
		&cli.StringFlag{Name: "s3-endpoint", Usage: "endpoint of an S3-compatible server (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS)"},
		&cli.StringFlag{Name: "s3-region", Usage: "S3 region (default: the AWS configuration's, else us-east-1)"},
		&cli.BoolFlag{Name: "s3-path-style", Usage: "address S3 buckets by path (always, with an endpoint override)"},
		&cli.StringFlag{Name: "codec-key-file", Usage: "keys that encrypt Temporal payloads and release secrets (default: $KUMO_HOME/codec.keys for the embedded server and kumo server; required with --temporal-address, shared by every worker and client of that cluster, unless --insecure-plaintext)", EnvVars: []string{"KUMO_CODEC_KEY_FILE"}},
		&cli.BoolFlag{Name: "insecure-plaintext", Usage: "with --temporal-address and no codec key file: run anyway, with Secret values in clear in the backend's spec and release files and in Temporal payloads"},
		&cli.BoolFlag{Name: "debug", Usage: "print Temporal's logs to stderr", EnvVars: []string{"KUMO_DEBUG"}},
		&cli.StringFlag{Name: "max-input-size", Usage: "largest spec, manifest, workspace or app file kumo reads, e.g. 16Mi (default 8Mi)", EnvVars: []string{input.MaxSizeEnv}},
	}
}

// withCommonFlags lets every command take the common flags after its name too
// (`kumo apply -f x --workspace prod` as well as `kumo --workspace prod apply`).
func withCommonFlags(cmds []*cli.Command) []*cli.Command {
	for _, cmd := range cmds {
		if len(cmd.Subcommands) > 0 {
			withCommonFlags(cmd.Subcommands)
			continue
		}
		cmd.Flags = append(cmd.Flags, commonFlags()...)
		if before := cmd.Before; before != nil {
			cmd.Before = func(c *cli.Context) error {
				if err := setInputLimit(c); err != nil {
					return err
				}
				return before(c)
			}
		} else {
			cmd.Before = setInputLimit
		}
	}
	return cmds
}

// setInputLimit applies --max-input-size (or $KUMO_MAX_INPUT_SIZE) to every
// reader of user input in this process, the embedded worker's included.
func setInputLimit(c *cli.Context) error {
	v := global(c, "max-input-size")
	if v == "" {
		return nil
	}
	n, err := input.ParseSize(v)
	if err != nil {
		return fmt.Errorf("--max-input-size (or $%s): %w", input.MaxSizeEnv, err)
	}
	input.SetMaxSize(n)
	return nil
}

// global reads a common flag wherever it was given: the command's own copy
// shadows the app's in urfave/cli, even when unset, so take the innermost one
// that was set to something, else the default. The environment sets every copy,
// so a value other than the environment's (a flag, before or after the command
// name) wins over it.
func global(c *cli.Context, name string) string {
	env, set := "", ""
	for _, f := range commonFlags() {
		if sf, ok := f.(*cli.StringFlag); ok && sf.Name == name {
			for _, v := range sf.EnvVars {
				if env = os.Getenv(v); env != "" {
					break
				}
			}
		}
	}
	for _, ctx := range c.Lineage() {
		if v := ctx.String(name); ctx.Command != nil && ctx.IsSet(name) && v != "" {
			if v != env {
				return v
			}
			set = v
		}
	}
	if set != "" {
		return set
	}
	return c.String(name)
}

func globalBool(c *cli.Context, name string) bool {
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.IsSet(name) {
			return ctx.Bool(name)
		}
	}
	return c.Bool(name)
}

// withOpen runs fn with a client for the command's flags, closed after it.
func withOpen(c *cli.Context, fn func(kc *client.Client) error) error {
	kc, err := open(c)
	if err != nil {
		return err
	}
	defer kc.CloseBeforeExit()
	return fn(kc)
}

// withProject runs fn with a client for the command's flags and the project
// name (--project, else the stack's).
func withProject(c *cli.Context, fn func(kc *client.Client, project string) error) error {
	project, err := projectName(c)
	if err != nil {
		return err
	}
	return withOpen(c, func(kc *client.Client) error { return fn(kc, project) })
}

// open returns a client for the command's flags. An S3 backend is checked here,
// before any run starts.
func open(c *cli.Context) (*client.Client, error) {
	opts, err := openOptions(c)
	if err != nil {
		return nil, err
	}
	kc, err := client.OpenContext(c.Context, opts)
	if err == nil && !kc.Encrypted() {
		fmt.Fprintf(os.Stderr, "warning: --insecure-plaintext: no codec key for %s: %s\n", opts.TemporalAddress, client.PlaintextExposes)
	}
	return kc, err
}

// openOptions are the client options of the command's flags.
func openOptions(c *cli.Context) (client.Options, error) {
	opts, err := backendOptions(c)
	if err != nil {
		return opts, err
	}
	conn, err := connection(c)
	if err != nil {
		return opts, err
	}
	opts.TemporalAddress, opts.Namespace, opts.Connection = conn.Address, conn.Namespace, conn
	opts.UIBaseURL = global(c, "ui-url")
	opts.Notices = os.Stderr
	if globalBool(c, "debug") {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return opts, nil
}

// manifestCommands take plain Kubernetes manifests, so -n/--namespace means
// something to them.
var manifestCommands = []string{"apply", "preview", "convert"}

// temporalNamespace is --temporal-namespace (or TEMPORAL_NAMESPACE). --namespace
// used to be the Temporal namespace; now it is the Kubernetes one, as in kubectl.
// Given to a command that takes no manifests, it is an old invocation: say so
// rather than run in the default Temporal namespace.
func temporalNamespace(c *cli.Context) (string, error) {
	if ns := global(c, "namespace"); ns != "" && !slices.Contains(manifestCommands, c.Command.Name) {
		var names []string
		for _, ctx := range c.Lineage() {
			if ctx.Command != nil && ctx.Command.Name != "" {
				names = append([]string{ctx.Command.Name}, names...)
			}
		}
		return "", fmt.Errorf("%s: -n/--namespace %s is the Kubernetes namespace of plain manifests now (as in kubectl), which this command does not take; for the Temporal namespace use --temporal-namespace %s (or TEMPORAL_NAMESPACE)",
			strings.Join(names, " "), ns, ns)
	}
	return global(c, "temporal-namespace"), nil
}

// connection is how to reach an existing Temporal cluster: the temporal CLI's
// profile and TEMPORAL_* environment, overridden by the flags given. Its
// Address is empty when none was named.
func connection(c *cli.Context) (envconfig.ClientConfigProfile, error) {
	// An old invocation's --namespace is refused rather than ignored.
	if _, err := temporalNamespace(c); err != nil {
		return envconfig.ClientConfigProfile{}, err
	}
	apiKey, token := globalSet(c, "api-key"), globalSet(c, "token")
	if token != "" {
		if apiKey != "" && apiKey != token {
			return envconfig.ClientConfigProfile{}, fmt.Errorf("--token (KUMO_TOKEN) and --api-key are both set and differ: a request carries one bearer credential")
		}
		apiKey = token
	}
	return client.LoadConnection(client.ConnectionFlags{
		Address: globalSet(c, "temporal-address"), Namespace: globalSet(c, "temporal-namespace"), APIKey: apiKey,
		TLSCertPath: globalSet(c, "tls-cert-path"), TLSKeyPath: globalSet(c, "tls-key-path"), TLSCAPath: globalSet(c, "tls-ca-path"),
		TLSServerName: globalSet(c, "tls-server-name"), Profile: globalSet(c, "profile"), ConfigFilePath: globalSet(c, "temporal-config-file"),
	})
}

// globalSet is global for a flag set on the command line or by its
// environment variable, else empty (not the flag's default).
func globalSet(c *cli.Context, name string) string {
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.IsSet(name) {
			return global(c, name)
		}
	}
	return ""
}

// backendFlags are the flags that say where the records live.
func backendFlags(c *cli.Context) client.Options {
	return client.Options{
		Home:              global(c, "home"),
		Backend:           global(c, "backend"),
		CodecKeyFile:      global(c, "codec-key-file"),
		InsecurePlaintext: globalBool(c, "insecure-plaintext"),
		S3: client.S3Options{
			Endpoint: global(c, "s3-endpoint"), Region: global(c, "s3-region"), PathStyle: globalBool(c, "s3-path-style"),
		},
	}
}

// backendOptions says where the records live: --backend (or KUMO_BACKEND), else
// the backend named in the nearest project.yaml, else the local directory --home.
func backendOptions(c *cli.Context) (client.Options, error) {
	opts := backendFlags(c)
	if opts.Backend == "" {
		p, _, err := nearestProject(c)
		if err != nil {
			return opts, err
		}
		if p != nil {
			opts.Backend = p.Backend
		}
	}
	return opts, nil
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func settings(c *cli.Context) runspec.RuntimeSettings {
	return runspec.RuntimeSettings{Kubeconfig: absPath(global(c, "kubeconfig")), Context: global(c, "context")}
}

// absPath makes a path independent of the worker's directory.
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// workspaceName is --workspace (or KUMO_WORKSPACE), else the workspace chosen
// with `kumo workspace switch`, else default.
func workspaceName(c *cli.Context, kc *client.Client) (string, error) {
	if w := global(c, "workspace"); w != "" {
		return w, nil
	}
	return kc.CurrentWorkspace()
}

// stackDir is --stack, else the current directory.
func stackDir(c *cli.Context) (string, error) {
	if c.IsSet("stack") && c.String("stack") != "" {
		return filepath.Abs(c.String("stack"))
	}
	return os.Getwd()
}

// projectName is --project, else the name in the nearest project.yaml at or above
// the stack directory (--stack, else the current one), else that directory's name.
func projectName(c *cli.Context) (string, error) {
	if p := global(c, "project"); p != "" {
		return p, nil
	}
	p, dir, err := nearestProject(c)
	if err != nil {
		return "", err
	}
	if p == nil {
		return filepath.Base(dir), nil
	}
	return p.Name, nil
}

// nearestProject loads the nearest project.yaml at or above the stack directory
// (--stack, else the current one), or returns nil and that directory when there
// is none.
func nearestProject(c *cli.Context) (*generate.Project, string, error) {
	dir, err := stackDir(c)
	if err != nil {
		return nil, "", err
	}
	projectDir, err := generate.FindProject(dir)
	if err != nil {
		return nil, dir, nil
	}
	p, err := generate.LoadProject(projectDir)
	return p, dir, err
}

// positionalArgs returns the command's positional arguments after applying the
// flags written among them, which urfave/cli leaves in the arguments once it
// meets the first positional one: `kumo release diff 1 2 -o json` and
// `kumo workspace create prod --file prod.yaml` work as written.
func positionalArgs(c *cli.Context) ([]string, error) {
	if c.NArg() < 2 {
		return c.Args().Slice(), nil
	}
	fs := flag.NewFlagSet(c.Command.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, f := range c.Command.Flags {
		if err := f.Apply(fs); err != nil {
			return nil, err
		}
	}
	// flag.Parse stops at the first non-flag: take it as an argument and go on.
	args, rest := []string{c.Args().First()}, c.Args().Tail()
	for {
		if err := fs.Parse(rest); err != nil {
			return nil, fmt.Errorf("kumo %s: %w", c.Command.FullName(), err)
		}
		if rest = fs.Args(); len(rest) == 0 {
			break
		}
		args, rest = append(args, rest[0]), rest[1:]
	}
	var err error
	fs.Visit(func(set *flag.Flag) {
		// A slice flag's String() is "[a b]"; its serialized form is what
		// urfave/cli's Set reads back as the whole list.
		value := set.Value.String()
		if s, ok := set.Value.(interface{ Serialize() string }); ok {
			value = s.Serialize()
		}
		for _, f := range c.Command.Flags {
			if !slices.Contains(f.Names(), set.Name) {
				continue
			}
			for _, name := range f.Names() { // urfave/cli keeps one value per alias
				if err == nil {
					err = c.Set(name, value)
				}
			}
		}
	})
	return args, err
}
