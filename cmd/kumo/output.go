package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"

	"github.com/kumoproj/kumo/engine"
)

// The formats a command can print in with --output.
const (
	formatTable = "table"
	formatYAML  = "yaml"
	formatJSON  = "json"
)

// outputFlag is the --output (-o) flag of a command that prints in formats;
// the first is the default. Like kubectl's PrintFlags it knows what its
// command can print and refuses anything else while the flags are parsed,
// before the command connects anywhere or starts a run, so the command
// prints with printOutput (or asks jsonOutput) without checking again.
func outputFlag(formats ...string) *cli.StringFlag {
	allowed := strings.Join(formats, " or ")
	return &cli.StringFlag{
		Name: "output", Aliases: []string{"o"}, Value: formats[0], Usage: allowed,
		Action: func(_ *cli.Context, format string) error {
			if !slices.Contains(formats, format) {
				return fmt.Errorf("--output %q: want %s", format, allowed)
			}
			return nil
		},
	}
}

// jsonOutput reports whether --output chose JSON, for a command that prints
// as it goes rather than one value.
func jsonOutput(c *cli.Context) bool {
	return c.String("output") == formatJSON
}

// printOutput prints v to stdout as --output chose: JSON, YAML, or, for the
// table format, whatever table draws (nil for a command that prints no table:
// its flag refuses the format).
func printOutput(c *cli.Context, v any, table func() error) error {
	switch c.String("output") {
	case formatJSON:
		return printJSON(v)
	case formatYAML:
		return printYAML(v)
	}
	return table()
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printYAML prints v as YAML; a Spec keeps the byte-stable layout of spec
// files (engine.MarshalSpec), so what generate prints can be applied with -f.
func printYAML(v any) error {
	var data []byte
	var err error
	if spec, ok := v.(*engine.Spec); ok {
		data, err = engine.MarshalSpec(spec)
	} else {
		data, err = yaml.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(data)
	return err
}
