package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpShowsNoUsageAsAPlaceholder renders the help of every command:
// urfave/cli takes a `quoted` word in a flag's usage for the flag's value
// placeholder, so `kumo workspace switch` in a usage string would show as
// "--workspace kumo workspace switch". A placeholder is one word (value, FILE).
func TestHelpShowsNoUsageAsAPlaceholder(t *testing.T) {
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		checkHelp(t, path)
		for _, c := range cmds {
			if !c.Hidden {
				walk(append(append([]string{}, path...), c.Name), c.Subcommands)
			}
		}
	}
	walk(nil, newApp().Commands)
}

// repeated is how urfave/cli shows that a flag may be given more than once.
var repeated = regexp.MustCompile(`\s*\[ [^]]* \]`)

func checkHelp(t *testing.T, path []string) {
	t.Helper()
	args := append(append([]string{"kumo"}, path...), "--help")
	command := strings.Join(args, " ")
	var out bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &out
	if err := app.Run(args); err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	flags := 0
	for _, line := range strings.Split(out.String(), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "-") {
			continue
		}
		flags++
		names, _, _ := strings.Cut(strings.ReplaceAll(line, "\t", "  "), "  ")
		for _, name := range strings.Split(repeated.ReplaceAllString(names, ""), ", ") {
			if len(strings.Fields(name)) > 2 {
				t.Errorf("%s shows a usage as the placeholder of a flag: %q", command, line)
				break
			}
		}
	}
	if flags == 0 {
		t.Errorf("%s shows no flags:\n%s", command, out.String())
	}
}
