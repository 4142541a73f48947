package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
)

// surgeryCommands are `kumo release forget` and `kumo release mv`: runs that
// change what the latest release records, nothing live.
func surgeryCommands() []*cli.Command {
	flags := func() []cli.Flag {
		return append([]cli.Flag{yesFlag(), detachFlag(), messageFlag()}, approvalFlags()...)
	}
	return []*cli.Command{
		{
			Name: "forget",
			Usage: "stop managing resources without deleting them: a new revision no longer records them; they stay live " +
				"(Terraform's state rm). Drop them from the stack too, or the next apply takes them over again",
			ArgsUsage: "ID...",
			Flags:     flags(),
			Action: func(c *cli.Context) error {
				if c.NArg() == 0 {
					return fmt.Errorf("release forget: name the resource IDs to forget (kumo release show lists them)")
				}
				return surgeryRun(c, func(ctx context.Context, kc *client.Client, req client.Request) (*client.Run, error) {
					return kc.Forget(ctx, req, c.Args().Slice())
				})
			},
		},
		{
			Name: "mv",
			Usage: "record a resource under another ID of the same live object, with no delete or create (Terraform's state mv): " +
				"a Terraform resource renamed, or a Kubernetes object under another apiVersion",
			ArgsUsage: "OLD NEW",
			Flags:     flags(),
			Action: func(c *cli.Context) error {
				if c.NArg() != 2 {
					return fmt.Errorf("release mv: want two resource IDs, OLD and NEW; got %d arguments", c.NArg())
				}
				return surgeryRun(c, func(ctx context.Context, kc *client.Client, req client.Request) (*client.Run, error) {
					return kc.Move(ctx, req, c.Args().Get(0), c.Args().Get(1))
				})
			},
		},
	}
}

func surgeryRun(c *cli.Context, start func(context.Context, *client.Client, client.Request) (*client.Run, error)) error {
	return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
		if err := setApproval(c, &req); err != nil {
			return err
		}
		req.Label.Message = c.String("message")
		run, err := start(ctx, kc, req)
		if err != nil {
			return err
		}
		return followOrDetach(ctx, c, kc, run, !req.AutoApprove)
	})
}
