package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// testCommand is kumo test: the test hooks of the latest release, as helm
// test runs a release's.
func testCommand() *cli.Command {
	return &cli.Command{
		Name:  "test",
		Usage: "run the test hooks (helm.sh/hook: test) of the stack's latest release, as helm test does; exits 1 when one fails",
		Flags: []cli.Flag{&cli.DurationFlag{Name: "timeout", Value: engine.DefaultWaitTimeout, Usage: "how long each test may take to complete"}},
		Action: func(c *cli.Context) error {
			if c.Duration("timeout") <= 0 {
				return fmt.Errorf("--timeout %v: want a positive duration", c.Duration("timeout"))
			}
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				res, err := kc.Test(ctx, runspec.TestInput{Project: req.Project, Workspace: req.Workspace, Settings: req.Settings, Timeout: c.Duration("timeout")})
				if res.Revision > 0 {
					printTests(c, res)
				}
				return err
			})
		},
	}
}

// printTests prints each test and how it ended, as helm test does.
func printTests(c *cli.Context, res runspec.TestResult) {
	w := c.App.Writer
	if len(res.Runs) == 0 {
		fmt.Fprintf(w, "Revision %d has no tests.\n", res.Revision)
		return
	}
	fmt.Fprintf(w, "Tests of revision %d:\n", res.Revision)
	for _, r := range res.Runs {
		line := fmt.Sprintf("  %-9s %s", r.Outcome, r.ID)
		if r.Message != "" {
			line += ": " + r.Message
		}
		if r.Deleted {
			line += " (deleted)"
		}
		fmt.Fprintln(w, line)
	}
}
