package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/gitsource"
)

// gitSourceFlags are preview's and apply's: generate from a git source.
func gitSourceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "source", Usage: "generate from the stack of git source `NAME` (kumo source add), at the commit its ref is at now"},
		&cli.StringFlag{Name: "commit", Usage: "with --source: generate from this commit ID instead of the ref's"},
	}
}

// sourceProject makes a run from a git source one of the source's project:
// a --project naming another is an error.
func sourceProject(c *cli.Context, kc *client.Client, req *client.Request) error {
	if req.GitSource == "" && req.StackDir == "" && req.Spec == nil {
		// No stack here and none named: the workspace's default source.
		name, err := kc.DefaultSource(c.Context, req.Workspace)
		if errors.Is(err, client.ErrNoDefaultSource) {
			dir, _ := stackDir(c)
			return fmt.Errorf("nothing to %s: %s is not a stack directory (no %s) and %w", c.Command.Name, dir, generate.StackFile, err)
		}
		if err != nil {
			return err
		}
		req.GitSource, req.GitCommit = name, c.String("commit")
	}
	if req.GitSource == "" {
		return nil
	}
	src, err := kc.Source(c.Context, req.GitSource)
	if err != nil {
		return err
	}
	if p := global(c, "project"); p != "" && p != src.Project {
		return fmt.Errorf("--source %s deploys project %s, not --project %s", src.Name, src.Project, p)
	}
	req.Project = src.Project
	return nil
}

func sourceCommand() *cli.Command {
	return &cli.Command{
		Name:  "source",
		Usage: "manage git sources: stacks read from a path of a git repository at a ref",
		Subcommands: []*cli.Command{
			{
				Name: "add", Usage: "add a git source (checked: the ref resolves, its commit fetches, the path is a stack)", ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "git", Usage: "repository `URL`: https://HOST/PATH, ssh://HOST/PATH or USER@HOST:PATH; required"},
					&cli.StringFlag{Name: "ref", Value: "main", Usage: "branch or tag to deploy"},
					&cli.StringFlag{Name: "path", Usage: "the stack's directory in the repository (default: its root)"},
					&cli.StringFlag{Name: "auth", Usage: "credentials from a file the worker reads: token-file=FILE (https) or ssh-key=FILE (ssh)"},
					&cli.StringFlag{Name: "known-hosts", Usage: "known_hosts `FILE` an ssh URL's host key is checked against (required for ssh)"},
					&cli.StringFlag{Name: "webhook-secret-file", Usage: "`FILE` holding the HMAC secret POST /hooks/git checks for this repository"},
				},
				Action: sourceAction(func(c *cli.Context, kc *client.Client, name string) error {
					if c.String("git") == "" {
						return fmt.Errorf("want the repository: kumo source add %s --git URL", name)
					}
					src := &gitsource.Source{Name: name, URL: c.String("git"), Ref: c.String("ref"), Path: c.String("path"),
						KnownHosts: c.String("known-hosts"), WebhookSecretFile: c.String("webhook-secret-file")}
					if a := c.String("auth"); a != "" {
						var err error
						if src.Auth, err = gitsource.ParseAuth(a); err != nil {
							return err
						}
					}
					if err := kc.AddSource(c.Context, src); err != nil {
						return err
					}
					fmt.Printf("Added source %s: project %s, stack %s, %s@%s path %q.\n", name, src.Project, src.Stack, src.URL, src.Ref, src.Path)
					return nil
				}),
			},
			{
				Name: "show", Usage: "print a git source", ArgsUsage: "NAME",
				Flags: []cli.Flag{outputFlag(formatYAML, formatJSON)},
				Action: sourceAction(func(c *cli.Context, kc *client.Client, name string) error {
					src, err := kc.Source(c.Context, name)
					if err != nil {
						return err
					}
					return printOutput(c, src, nil)
				}),
			},
			{
				Name: "list", Usage: "list the git sources",
				Flags: []cli.Flag{outputFlag(formatTable, formatJSON)},
				Action: func(c *cli.Context) error {
					return withOpen(c, func(kc *client.Client) error {
						srcs, err := kc.Sources(c.Context)
						if err != nil {
							return err
						}
						return printOutput(c, srcs, func() error {
							tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
							fmt.Fprintln(tw, "NAME\tPROJECT\tSTACK\tURL\tREF\tPATH")
							for _, s := range srcs {
								fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Project, s.Stack, s.URL, s.Ref, orDash(s.Path))
							}
							return tw.Flush()
						})
					})
				},
			},
			{
				Name: "remove", Usage: "remove a git source (its releases keep naming it)", ArgsUsage: "NAME",
				Action: sourceAction(func(c *cli.Context, kc *client.Client, name string) error {
					if err := kc.RemoveSource(c.Context, name); err != nil {
						return err
					}
					fmt.Printf("Removed source %s.\n", name)
					return nil
				}),
			},
		},
	}
}

// sourceAction runs fn with a client and the NAME argument; flags may follow NAME.
func sourceAction(fn func(c *cli.Context, kc *client.Client, name string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		args, err := positionalArgs(c)
		if err != nil {
			return err
		}
		if len(args) != 1 {
			return fmt.Errorf("want one source NAME: kumo source %s NAME, got %q", c.Command.Name, strings.Join(args, " "))
		}
		return withOpen(c, func(kc *client.Client) error { return fn(c, kc, args[0]) })
	}
}

// hasFlag reports whether the command defines flag name.
func hasFlag(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}
