// Command kumo generates resource specs from stacks, previews, applies and
// destroys them as durable Temporal runs, and keeps a numbered release of each.
// See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/internal/memlimit"
)

// exitError carries a specific exit code (a failed release, an interrupted run).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func newApp() *cli.App {
	return &cli.App{
		Name:                 "kumo",
		Usage:                "preview, apply and destroy infrastructure specs as durable Temporal runs",
		Flags:                commonFlags(),
		EnableBashCompletion: true,
		Commands: withCommonFlags([]*cli.Command{
			generateCommand(), previewCommand(), applyCommand(), destroyCommand(), rollbackCommand(), resumeCommand(),
			approveCommand(), rejectCommand(),
			releaseCommand(), specCommand(), driftCommand(), statusCommand(), workspaceCommand(), runCommand(), workerCommand(), serverCommand(), temporalCommand(), codecCommand(),
		}),
		// Errors are printed once, by main, without a stack trace.
		ExitErrHandler: func(*cli.Context, error) {},
	}
}

func main() {
	memlimit.Set()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp()
	if err := app.RunContext(ctx, os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(1)
	}
}
