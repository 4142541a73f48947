package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
)

func generateCommand() *cli.Command {
	return &cli.Command{
		Name:  "generate",
		Usage: "generate the stack's resource spec for the workspace and print it (KusionStack Spec format)",
		Flags: []cli.Flag{stackFlag(), generatorTimeoutFlag(),
			outputFlag(formatYAML, formatJSON)},
		Action: func(c *cli.Context) error {
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				if err := setSource(c, &req); err != nil {
					return err
				}
				run, err := kc.Generate(ctx, req)
				if err != nil {
					return err
				}
				spec, err := run.Spec(ctx)
				if err != nil {
					return runFailed(ctx, run, err)
				}
				return printOutput(c, spec, nil)
			})
		},
	}
}
