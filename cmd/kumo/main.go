// Command kumo generates resource specs from stacks, previews, applies and
// destroys them as durable Temporal runs, and keeps a numbered release of each.
// See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/internal/memlimit"
)

// exitError carries a specific exit code (a failed release, an interrupted
// run). One without err is a result the command has printed already, such as
// drift found: kumo exits with its code and prints nothing more.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit code %d", e.code)
	}
	return e.err.Error()
}

// reportError prints err to stderr, unless it is a result already printed,
// and returns the exit code it carries (1 for any other error).
func reportError(stderr io.Writer, err error) int {
	var ee *exitError
	if errors.As(err, &ee) && ee.err == nil {
		return ee.code
	}
	fmt.Fprintln(stderr, "Error:", err)
	if ee != nil {
		return ee.code
	}
	return 1
}

func newApp() *cli.App {
	return &cli.App{
		Name:                 "kumo",
		Usage:                "preview, apply and destroy infrastructure specs as durable Temporal runs",
		Flags:                commonFlags(),
		EnableBashCompletion: true,
		Commands: withCommonFlags([]*cli.Command{
			generateCommand(), previewCommand(), applyCommand(), destroyCommand(), rollbackCommand(), refreshCommand(), testCommand(), resumeCommand(),
			approveCommand(), rejectCommand(), auditCommand(), rolloutCommand(),
			releaseCommand(), specCommand(), driftCommand(), statusCommand(), workspaceCommand(), sourceCommand(), syncCommand(), runCommand(), policyCommand(), workerCommand(), apiCommand(), serverCommand(), temporalCommand(), codecCommand(), tokenCommand(), backendCommand(),
		}),
		// Errors are printed once, by main, without a stack trace.
		ExitErrHandler: func(*cli.Context, error) {},
	}
}

func main() {
	memlimit.Set()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile, err := startProfile()
	if err != nil {
		os.Exit(reportError(os.Stderr, err))
	}
	app := newApp()
	err = app.RunContext(ctx, os.Args)
	stopProfile()
	if err != nil {
		os.Exit(reportError(os.Stderr, err))
	}
}
