package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/runspec"
)

// logTailLines is how much of the run log a failed command prints.
const logTailLines = 20

// logPollInterval is how often `run logs --follow` looks for more.
const logPollInterval = 500 * time.Millisecond

func runLogsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "print the log a run kept: generator output, per-resource outcomes, errors",
		ArgsUsage: "RUN_ID",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing, resource by resource, until the run ends"}},
		Action: func(c *cli.Context) error {
			return withRunClient(c, func(kc *client.Client, project, runID string) error {
				if !c.Bool("follow") {
					log, err := kc.RunLog(c.Context, runID)
					if err != nil {
						return err
					}
					_, err = os.Stdout.Write(log)
					return err
				}
				run, _, err := kc.OpenRun(c.Context, project, runID)
				if err != nil {
					return err
				}
				return followLog(c.Context, kc, run)
			})
		},
	}
}

// followLog prints the run's log as it grows and, while the run goes, each
// resource as it finishes, until the run ends.
func followLog(ctx context.Context, kc *client.Client, run *client.Run) error {
	var printed []byte
	nodes := map[string]runspec.NodeStatus{}
	printNew := func() {
		log, err := kc.Backend().RunLog(ctx, run.RunID)
		if err != nil || !bytes.HasPrefix(log, printed) {
			return // none yet; a part is only ever added after the ones before it
		}
		os.Stdout.Write(log[len(printed):])
		printed = log
	}
	ticker := time.NewTicker(logPollInterval)
	defer ticker.Stop()
	var seq uint64 // how far the run's progress has been seen
	for {
		printNew()
		info, err := run.Info(ctx)
		if err != nil {
			return err
		}
		if !info.Running() {
			printNew() // the last part is written as the run ends
			return nil
		}
		if p, next, err := run.ProgressSince(ctx, seq, false); err == nil {
			seq = next
			for _, n := range p.Nodes {
				if nodes[n.ID] != n.Status {
					nodes[n.ID] = n.Status
					printNode(os.Stdout, n)
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

// runFailed prints the tail of a failed run's log and how to see all of it, then
// returns the run's error as a failed command.
func runFailed(ctx context.Context, run *client.Run, err error) error {
	return runEnded(ctx, run, "failed", err)
}

// runEnded is runFailed for a run that ended as outcome says: failed, or
// cancelled (or its preview not approved), the word `kumo run list` shows for
// it; a cancelled run exits exitCancelled.
func runEnded(ctx context.Context, run *client.Run, outcome string, err error) error {
	code := exitFailed
	if outcome == string(runspec.StatusCancelled) {
		code = exitCancelled
	}
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	log, lerr := run.Log(qctx)
	if lerr != nil || len(log) == 0 {
		fmt.Fprintf(os.Stderr, "Run %s %s.\n", run.RunID, outcome)
		return &exitError{code: code, err: err}
	}
	lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	fmt.Fprintf(os.Stderr, "Run log (last %d lines):\n  %s\n", len(lines), strings.Join(lines, "\n  "))
	fmt.Fprintf(os.Stderr, "Run %s %s; the whole log: kumo run logs %s\n", run.RunID, outcome, run.RunID)
	return &exitError{code: code, err: err}
}
