package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// statusInterval is how often --watch reads the stack again.
const statusInterval = 2 * time.Second

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show every resource of the latest release, read live, with its health; exits 0 only when the stack is Healthy",
		Flags: []cli.Flag{
			stackFlag(),
			&cli.BoolFlag{Name: "tree", Usage: "also show the objects each resource owns (Deployment → ReplicaSet → Pod), with their health"},
			&cli.BoolFlag{Name: "watch", Usage: "redraw whenever the status changes, until interrupted"},
			outputFlag(formatTable, formatJSON),
		},
		Action: func(c *cli.Context) error {
			return withClient(c, func(kc *client.Client, t target) error {
				s, err := kc.Settings(c.Context, t.Workspace, settings(c))
				if err != nil {
					return err
				}
				reader := kc.Statuses()
				read := func() (runspec.StackStatus, error) {
					return reader.Read(c.Context, t.Project, t.Workspace, s, c.Bool("tree"))
				}
				st, err := read()
				if err != nil {
					return err
				}
				if err := printStatus(c, st); err != nil {
					return err
				}
				if c.Bool("watch") {
					st, err = watchStatus(c.Context, st, read, func(st runspec.StackStatus) error {
						if !jsonOutput(c) {
							fmt.Print("\033[H\033[2J") // clear the terminal, like watch(1)
						}
						return printStatus(c, st)
					})
					if err != nil && !errors.Is(err, context.Canceled) {
						return err
					}
				}
				if st.Health.Status != health.Healthy {
					return &exitError{code: 1, err: fmt.Errorf("%s/%s is %s", t.Project, t.Workspace, st.Health)}
				}
				return nil
			})
		},
	}
}

// watchStatus reads the stack every statusInterval and calls show when
// anything changed, until ctx ends; it returns the last status read.
func watchStatus(ctx context.Context, last runspec.StackStatus, read func() (runspec.StackStatus, error), show func(runspec.StackStatus) error) (runspec.StackStatus, error) {
	t := time.NewTicker(statusInterval)
	defer t.Stop()
	prev := statusText(last)
	for {
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-t.C:
		}
		st, err := read()
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			return last, err
		}
		last = st
		if text := statusText(st); text != prev {
			prev = text
			if err := show(st); err != nil {
				return last, err
			}
		}
	}
}

func printStatus(c *cli.Context, st runspec.StackStatus) error {
	return printOutput(c, st, func() error {
		_, err := io.WriteString(os.Stdout, statusText(st))
		return err
	})
}

// statusText renders the status as a table: one row per resource (owned
// objects indented under it), then the stack's health.
func statusText(st runspec.StackStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %s\n", "HEALTH", "RESOURCE")
	var rows func(nodes []runtime.StatusNode, indent string)
	rows = func(nodes []runtime.StatusNode, indent string) {
		for _, n := range nodes {
			fmt.Fprintf(&b, "%-12s %s%s", n.Health.Status, indent, n.ID)
			if n.Health.Message != "" {
				fmt.Fprintf(&b, "  %s", n.Health.Message)
			}
			b.WriteString("\n")
			rows(n.Children, indent+"  ")
		}
	}
	rows(st.Resources, "")
	fmt.Fprintf(&b, "%s/%s revision %d: %s\n", st.Project, st.Workspace, st.Revision, st.Health)
	return b.String()
}
