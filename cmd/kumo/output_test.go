package main

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestOutputFlagRefusesAFormatBeforeTheCommandRuns: an --output the command
// cannot print is refused, naming the flag, the value and the formats, and the
// command's action never starts; a format it prints reaches the action.
func TestOutputFlagRefusesAFormatBeforeTheCommandRuns(t *testing.T) {
	for _, tc := range []struct {
		formats []string
		args    []string
		want    string // the format the action sees, or the error
	}{
		{[]string{formatTable, formatJSON}, nil, "table"},
		{[]string{formatTable, formatJSON}, []string{"-o", "json"}, "json"},
		{[]string{formatYAML, formatJSON}, []string{"--output", "json"}, "json"},
		{[]string{formatYAML, formatJSON}, nil, "yaml"},
		{[]string{formatTable, formatJSON}, []string{"-o", "yaml"}, `--output "yaml": want table or json`},
		{[]string{formatYAML, formatJSON}, []string{"--output", "table"}, `--output "table": want yaml or json`},
	} {
		got := ""
		app := &cli.App{Name: "kumo", Commands: []*cli.Command{{
			Name: "show", Flags: []cli.Flag{outputFlag(tc.formats...)},
			Action: func(c *cli.Context) error {
				got = c.String("output")
				return nil
			},
		}}}
		if err := app.Run(append([]string{"kumo", "show"}, tc.args...)); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("kumo show %s with formats %v: %q, want %q", strings.Join(tc.args, " "), tc.formats, got, tc.want)
		}
	}
}
