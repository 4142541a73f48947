package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine/generate"
)

func commonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "project", Usage: "project name (default: name in the nearest project.yaml, else the current directory's name)", EnvVars: []string{"KUMO_PROJECT"}},
		&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "target workspace (default: the one `kumo workspace switch` chose, else default)", EnvVars: []string{"KUMO_WORKSPACE"}},
		&cli.StringFlag{Name: "kubeconfig", Usage: "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)"},
		&cli.StringFlag{Name: "context", Usage: "kubeconfig context"},
		&cli.StringFlag{Name: "temporal-address", Usage: "host:port of an existing Temporal cluster (default: run an embedded server)", EnvVars: []string{"TEMPORAL_ADDRESS"}},
		&cli.StringFlag{Name: "namespace", Value: "default", Usage: "Temporal namespace", EnvVars: []string{"TEMPORAL_NAMESPACE"}},
		&cli.StringFlag{Name: "home", Usage: "kumo's data directory (default: $KUMO_HOME, else ~/.kumo)", EnvVars: []string{"KUMO_HOME"}},
		&cli.BoolFlag{Name: "debug", Usage: "print Temporal's logs to stderr", EnvVars: []string{"KUMO_DEBUG"}},
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
	}
	return cmds
}

// global reads a common flag wherever it was given: the command's own copy
// shadows the app's in urfave/cli, even when unset, so take the innermost one
// that was set to something (flag or environment), else the default.
func global(c *cli.Context, name string) string {
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.IsSet(name) && ctx.String(name) != "" {
			return ctx.String(name)
		}
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

// open returns a client for the command's flags.
func open(c *cli.Context) (*client.Client, error) {
	opts := client.Options{
		Home:            global(c, "home"),
		TemporalAddress: global(c, "temporal-address"),
		Namespace:       global(c, "namespace"),
	}
	if globalBool(c, "debug") {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return client.Open(opts)
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func settings(c *cli.Context) activities.RuntimeSettings {
	return activities.RuntimeSettings{Kubeconfig: absPath(global(c, "kubeconfig")), Context: global(c, "context")}
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
	dir, err := stackDir(c)
	if err != nil {
		return "", err
	}
	projectDir, err := generate.FindProject(dir)
	if err != nil {
		return filepath.Base(dir), nil
	}
	p, err := generate.LoadProject(projectDir)
	if err != nil {
		return "", err
	}
	return p.Name, nil
}
