package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

func generateCommand() *cli.Command {
	return &cli.Command{
		Name:  "generate",
		Usage: "generate the stack's resource spec for the workspace and print it (KusionStack Spec format)",
		Flags: []cli.Flag{stackFlag(), generatorTimeoutFlag(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "yaml", Usage: "yaml or json"}},
		Action: func(c *cli.Context) error {
			format := c.String("output")
			if format != "yaml" && format != "json" {
				return fmt.Errorf("unknown output %q (want yaml or json)", format)
			}
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
				return printSpec(spec, format)
			})
		},
	}
}

// printSpec writes a spec to stdout; both formats are byte-stable for the same spec.
func printSpec(spec *engine.Spec, format string) error {
	if format == "json" {
		data, err := json.MarshalIndent(spec, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Println(string(data))
		return err
	}
	data, err := engine.MarshalSpec(spec)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(data)
	return err
}
