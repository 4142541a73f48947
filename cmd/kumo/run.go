package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

func specFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "spec-file", Aliases: []string{"f"}, Usage: "resource spec (KusionStack Spec YAML)", Required: true}
}

func parallelismFlag() *cli.IntFlag {
	return &cli.IntFlag{Name: "parallelism", Value: 10, Usage: "how many resources to change at once"}
}

func yesFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "apply without asking for confirmation"}
}

func previewCommand() *cli.Command {
	return &cli.Command{
		Name:  "preview",
		Usage: "show what apply would change, resource by resource and field by field",
		Flags: []cli.Flag{specFlag(), parallelismFlag(), &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "table or json", Value: "table"}},
		Action: func(c *cli.Context) error {
			if o := c.String("output"); o != "table" && o != "json" {
				return fmt.Errorf("unknown output %q (want table or json)", o)
			}
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				run, err := kc.Preview(ctx, req)
				if err != nil {
					return err
				}
				res, err := run.Wait(ctx)
				if err != nil {
					return err
				}
				if c.String("output") == "json" {
					return printJSON(map[string]any{"changes": res.Changes})
				}
				printChanges(os.Stdout, res.Changes)
				return nil
			})
		},
	}
}

func applyCommand() *cli.Command {
	return &cli.Command{
		Name:  "apply",
		Usage: "preview, confirm, and apply a spec in dependency order; records a release",
		Flags: []cli.Flag{specFlag(), parallelismFlag(), yesFlag(),
			&cli.BoolFlag{Name: "rollback-on-failure", Usage: "if a resource fails, undo what this apply changed, in reverse order"}},
		Action: func(c *cli.Context) error {
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				req.AutoApprove = c.Bool("yes")
				req.RollbackOnFailure = c.Bool("rollback-on-failure")
				run, err := kc.Apply(ctx, req)
				if err != nil {
					return err
				}
				return follow(ctx, run, !req.AutoApprove)
			})
		},
	}
}

func destroyCommand() *cli.Command {
	return &cli.Command{
		Name:  "destroy",
		Usage: "delete everything the latest release recorded, dependents first",
		Flags: []cli.Flag{parallelismFlag(), yesFlag()},
		Action: func(c *cli.Context) error {
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				req.AutoApprove = c.Bool("yes")
				run, err := kc.Destroy(ctx, req)
				if err != nil {
					return err
				}
				return follow(ctx, run, !req.AutoApprove)
			})
		},
	}
}

func rollbackCommand() *cli.Command {
	return &cli.Command{
		Name:  "rollback",
		Usage: "apply an earlier revision's spec again, as a new revision",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "revision", Usage: "revision to restore (default: the last succeeded one before the latest)"},
			&cli.BoolFlag{Name: "allow-failed", Usage: "allow restoring a revision whose apply failed"},
			parallelismFlag(), yesFlag(),
		},
		Action: func(c *cli.Context) error {
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				req.AutoApprove = c.Bool("yes")
				run, err := kc.Rollback(ctx, req, c.Int("revision"), c.Bool("allow-failed"))
				if err != nil {
					return err
				}
				return follow(ctx, run, !req.AutoApprove)
			})
		},
	}
}

func resumeCommand() *cli.Command {
	return &cli.Command{
		Name:  "resume",
		Usage: "follow the unfinished apply or destroy of the project+workspace to its end",
		Action: func(c *cli.Context) error {
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				run, err := kc.Unfinished(ctx, req.Project, req.Workspace)
				if err != nil {
					return err
				}
				if run == nil {
					fmt.Printf("Nothing to resume: %s/%s has no unfinished run.\n", req.Project, req.Workspace)
					return nil
				}
				fmt.Printf("Resuming %s run %s of %s/%s.\n", run.Operation, run.RunID, req.Project, req.Workspace)
				return follow(ctx, run, true)
			})
		},
	}
}

// withRun builds the request from the flags, opens a client and closes it (and
// the embedded server) when the command ends.
func withRun(c *cli.Context, fn func(context.Context, *client.Client, client.Request) error) error {
	return withClient(c, func(kc *client.Client, project string) error {
		req := client.Request{
			Project: project, Workspace: global(c, "workspace"),
			Parallelism: c.Int("parallelism"), Settings: settings(c),
		}
		if path := c.String("spec-file"); path != "" {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if req.Spec, err = engine.ParseSpec(data, path); err != nil {
				return err
			}
			if err := req.Spec.Validate(); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		err := fn(c.Context, kc, req)
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		if errors.Is(c.Context.Err(), context.Canceled) && kc.Embedded() {
			fmt.Fprintln(os.Stderr, "Interrupted: the run is recorded and continues the next time kumo starts; `kumo resume` follows it.")
			return &exitError{code: 130, err: err}
		}
		return err
	})
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
