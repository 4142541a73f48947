package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/runspec"
)

// defaultApprovalTimeout is how long a run waits for approval unless told.
const defaultApprovalTimeout = 24 * time.Hour

// approvalFlags say whether and how long a mutating run waits for approval.
func approvalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "approval", Usage: "required: wait for approval after the preview (the prompt, kumo approve); auto: apply without (as --yes) (default: required unless --yes)"},
		&cli.DurationFlag{Name: "approval-timeout", Value: defaultApprovalTimeout, Usage: "how long the run waits for approval before it fails; the wait outlives this command"},
	}
}

// setApproval fills req from --yes, --approval and --approval-timeout.
func setApproval(c *cli.Context, req *client.Request) error {
	switch mode := c.String("approval"); mode {
	case "":
		req.AutoApprove = c.Bool("yes")
	case "auto":
		req.AutoApprove = true
	case "required":
		if c.Bool("yes") {
			return errors.New("--yes and --approval required contradict each other: give one")
		}
	default:
		return fmt.Errorf("--approval %q: want required or auto", mode)
	}
	if d := c.Duration("approval-timeout"); d <= 0 {
		return fmt.Errorf("--approval-timeout %s: want a positive duration", d)
	}
	req.ApprovalTimeout = c.Duration("approval-timeout")
	return nil
}

func approveCommand() *cli.Command {
	return &cli.Command{
		Name:      "approve",
		Usage:     "approve the plan of a run awaiting approval, from any terminal",
		ArgsUsage: "[RUN_ID] (default: the running apply, destroy or rollback of --project/--workspace)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "digest", Usage: "the plan digest you reviewed (shown with the preview); refused if the run's plan is another"},
			&cli.StringFlag{Name: "reason", Usage: "why, for the run's record"},
		},
		Action: func(c *cli.Context) error {
			return answerRun(c, true)
		},
	}
}

func rejectCommand() *cli.Command {
	return &cli.Command{
		Name:      "reject",
		Usage:     "reject the plan of a run awaiting approval: its release fails with the reason, nothing is changed",
		ArgsUsage: "[RUN_ID] (default: the running apply, destroy or rollback of --project/--workspace)",
		Flags: []cli.Flag{
			// Checked in the action: flags may follow RUN_ID (positionalArgs).
			&cli.StringFlag{Name: "reason", Usage: "why (required); the failed release records it"},
			&cli.StringFlag{Name: "digest", Usage: "the plan digest you reviewed; refused if the run's plan is another"},
		},
		Action: func(c *cli.Context) error {
			return answerRun(c, false)
		},
	}
}

// answerRun sends req to the run named by the argument (or the running one of
// the project+workspace). With the embedded server, the run goes on in this
// process, so the command follows it to its end; otherwise the workers carry
// it on and the command returns.
func answerRun(c *cli.Context, approve bool) error {
	args, err := positionalArgs(c)
	if err != nil {
		return err
	}
	if len(args) > 1 {
		return fmt.Errorf("want at most one RUN_ID, got %d arguments", len(args))
	}
	runID := ""
	if len(args) == 1 {
		runID = args[0]
	}
	// Read the flags after positionalArgs: they may follow RUN_ID.
	req := runspec.ApprovalRequest{Approve: approve, Digest: c.String("digest"), Reason: c.String("reason")}
	if !approve && req.Reason == "" {
		return errors.New("kumo reject needs --reason TEXT: the failed release records why")
	}
	return withClient(c, func(kc *client.Client, t target) error {
		ctx := c.Context
		run, err := kc.RunToAnswer(ctx, t.Project, t.Workspace, runID)
		if err != nil {
			return err
		}
		answer, err := run.Answer(ctx, req)
		if err != nil {
			return fmt.Errorf("%s run %s: %w", run.Operation, run.RunID, err)
		}
		verb := "Rejected"
		if req.Approve {
			verb = "Approved"
		}
		fmt.Printf("%s %s run %s (revision %d, plan %s).\n", verb, run.Operation, run.RunID, answer.Revision, answer.Digest)
		if req.Approve && answer.Required > 1 && answer.Approvals < answer.Required {
			fmt.Printf("That is approval %d of the %d the workspace requires: the run waits for the others.\n", answer.Approvals, answer.Required)
			return nil
		}
		if !kc.Embedded() {
			fmt.Printf("It goes on on the workers; `kumo resume` follows it.\n")
			return nil
		}
		return follow(ctx, run, false)
	})
}

// printDigest shows the plan digest under a preview: what `kumo approve
// --digest` names.
func printDigest(w io.Writer, digest string) {
	if digest != "" {
		fmt.Fprintf(w, "Plan digest: %s\n", digest)
	}
}

// printAwaiting says, once, where a run waiting for approval can be answered.
func printAwaiting(w io.Writer, run *client.Run, a *runspec.ApprovalState) {
	until := ""
	if a != nil && !a.Deadline.IsZero() {
		until = " until " + a.Deadline.Local().Format(time.DateTime)
	}
	fmt.Fprintf(w, "Run %s awaits approval%s: `kumo approve %s` or `kumo reject %s --reason ...` answers it from any terminal.\n",
		run.RunID, until, run.RunID, run.RunID)
}

// promptDeclined is the reason of a rejection at the prompt.
const promptDeclined = "not approved at the prompt"

// askApproval prompts for the answer and sends it to the run. An interrupt
// leaves the run waiting; an answer the run no longer takes (answered
// elsewhere) is reported and the caller goes on following.
func askApproval(ctx context.Context, run *client.Run, answers chan<- error) {
	go func() {
		approved := confirm(os.Stdin, os.Stdout, fmt.Sprintf("Do you want to %s these changes? [y/N] ", run.Operation))
		if ctx.Err() != nil {
			return
		}
		req := runspec.ApprovalRequest{Approve: approved}
		if !approved {
			req.Reason = promptDeclined
		}
		_, err := run.Answer(context.WithoutCancel(ctx), req)
		answers <- err
	}()
}

// stillWaiting is the error of a command interrupted while its run awaits
// approval: the run keeps waiting, durably.
func stillWaiting(run *client.Run) error {
	return &exitError{code: 130, err: fmt.Errorf("interrupted: %s run %s still awaits approval; `kumo approve %s` or `kumo reject %s --reason ...` answers it",
		run.Operation, run.RunID, run.RunID, run.RunID)}
}
