package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
)

// logTailLines is how much of the run log a failed command prints.
const logTailLines = 20

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "inspect runs",
		Subcommands: []*cli.Command{{
			Name:      "logs",
			Usage:     "print the log a run kept: generator output, per-resource outcomes, errors",
			ArgsUsage: "RUN_ID",
			Action: func(c *cli.Context) error {
				args, err := positionalArgs(c)
				if err != nil {
					return err
				}
				if len(args) != 1 {
					return fmt.Errorf("want one RUN_ID (printed by the command that started the run), got %d arguments", len(args))
				}
				kc, err := open(c)
				if err != nil {
					return err
				}
				defer kc.CloseBeforeExit()
				log, err := kc.RunLog(c.Context, args[0])
				if err != nil {
					return err
				}
				_, err = os.Stdout.Write(log)
				return err
			},
		}},
	}
}

// runFailed prints the tail of a failed run's log and how to see all of it, then
// returns the run's error as a failed command.
func runFailed(ctx context.Context, run *client.Run, err error) error {
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	log, lerr := run.Log(qctx)
	if lerr != nil || len(log) == 0 {
		fmt.Fprintf(os.Stderr, "Run %s failed.\n", run.RunID)
		return &exitError{code: 1, err: err}
	}
	lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	fmt.Fprintf(os.Stderr, "Run log (last %d lines):\n  %s\n", len(lines), strings.Join(lines, "\n  "))
	fmt.Fprintf(os.Stderr, "Run %s failed; the whole log: kumo run logs %s\n", run.RunID, run.RunID)
	return &exitError{code: 1, err: err}
}
