package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
)

func syncCommand() *cli.Command {
	sourceFlag := &cli.StringFlag{Name: "source", Usage: "the git source (kumo source list); default: the workspace's sources.default"}
	return &cli.Command{
		Name:  "sync",
		Usage: "keep a workspace at what a git source's ref is at",
		Subcommands: []*cli.Command{{
			Name:  "schedule",
			Usage: "sync schedules: each tick resolves the ref (one ls-remote) and previews or applies a new commit",
			Subcommands: []*cli.Command{
				{
					Name: "create", Usage: "create the sync schedule of a source in a workspace (needs kumo server or --temporal-address)",
					Flags: []cli.Flag{sourceFlag,
						&cli.DurationFlag{Name: "every", Value: client.DefaultSyncInterval, Usage: "the interval between ticks"},
						&cli.StringFlag{Name: "mode", Value: "apply", Usage: "what a new commit starts: preview or apply"},
						&cli.StringFlag{Name: "approval", Value: "auto", Usage: "required: an apply waits for an approval after its preview; auto: it goes on"},
						parallelismFlag(),
					},
					Action: syncAction(func(c *cli.Context, kc *client.Client, project string) error {
						approval := c.String("approval")
						if approval != "auto" && approval != "required" {
							return fmt.Errorf("--approval %q: want required or auto", approval)
						}
						s, err := kc.Settings(c.Context, global(c, "workspace"), settings(c))
						if err != nil {
							return err
						}
						sched, err := kc.CreateSyncSchedule(c.Context, client.SyncScheduleRequest{
							Source: c.String("source"), Workspace: global(c, "workspace"), Every: c.Duration("every"), Mode: c.String("mode"),
							ApprovalRequired: approval == "required", Parallelism: c.Int("parallelism"), Settings: s,
						})
						if err != nil {
							return err
						}
						fmt.Printf("Created sync schedule %s: %s of source %s every %s.\n", sched.ID, sched.Mode, sched.Source, sched.Every)
						return nil
					}),
				},
				{
					Name: "show", Usage: "show a sync schedule and what it last did", Flags: []cli.Flag{sourceFlag, outputFlag(formatYAML, formatJSON)},
					Action: syncAction(func(c *cli.Context, kc *client.Client, project string) error {
						s, err := kc.DescribeSyncSchedule(c.Context, project, global(c, "workspace"))
						if err != nil {
							return err
						}
						return printOutput(c, s, nil)
					}),
				},
				{
					Name: "trigger", Usage: "tick now (after the tick in progress)", Flags: []cli.Flag{sourceFlag},
					Action: syncAction(func(c *cli.Context, kc *client.Client, project string) error {
						if err := kc.TriggerSync(c.Context, project, global(c, "workspace")); err != nil {
							return err
						}
						fmt.Printf("Triggered the sync of %s/%s.\n", project, global(c, "workspace"))
						return nil
					}),
				},
				{
					Name: "delete", Usage: "delete a sync schedule (a run it started goes on)", Flags: []cli.Flag{sourceFlag},
					Action: syncAction(func(c *cli.Context, kc *client.Client, project string) error {
						if err := kc.DeleteSyncSchedule(c.Context, project, global(c, "workspace")); err != nil {
							return err
						}
						fmt.Printf("Deleted the sync schedule of %s/%s.\n", project, global(c, "workspace"))
						return nil
					}),
				},
				{
					Name: "list", Usage: "list the sync schedules", Flags: []cli.Flag{outputFlag(formatTable, formatJSON)},
					Action: func(c *cli.Context) error {
						return withOpen(c, func(kc *client.Client) error {
							all, err := kc.SyncSchedules(c.Context)
							if err != nil {
								return err
							}
							return printOutput(c, all, func() error {
								tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
								fmt.Fprintln(tw, "ID\tSOURCE\tMODE\tEVERY\tLAST COMMIT\tSKIPPED")
								for _, s := range all {
									last, skipped := "-", "-"
									if s.State != nil && s.State.Commit != "" {
										last = s.State.Commit[:12]
										if len(s.State.Skipped) > 0 {
											skipped = strings.Join(s.State.Skipped, ",")
										}
									}
									fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Source, s.Mode, s.Every, last, skipped)
								}
								return tw.Flush()
							})
						})
					},
				},
			},
		}},
	}
}

// syncAction runs fn with a client and the project of --source (else of
// the workspace's default source), after checking --workspace is given.
func syncAction(fn func(c *cli.Context, kc *client.Client, project string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if global(c, "workspace") == "" {
			return fmt.Errorf("want the workspace: kumo sync schedule %s --workspace NAME [--source NAME]", c.Command.Name)
		}
		return withOpen(c, func(kc *client.Client) error {
			name := c.String("source")
			if name == "" {
				// The workspace's default source (sources.default).
				var err error
				if name, err = kc.DefaultSource(c.Context, global(c, "workspace")); err != nil {
					return err
				}
				if err := c.Set("source", name); err != nil {
					return err
				}
			}
			src, err := kc.Source(c.Context, name)
			if err != nil {
				return err
			}
			return fn(c, kc, src.Project)
		})
	}
}
