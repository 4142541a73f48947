package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/worker"
)

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "run a kumo worker against an existing Temporal cluster (--temporal-address)",
		Action: func(c *cli.Context) error {
			conn, err := connection(c)
			if err != nil {
				return err
			}
			if conn.Address == "" {
				return errors.New("kumo worker needs --temporal-address (or TEMPORAL_ADDRESS, or a temporal CLI profile with an address): the Temporal frontend to poll")
			}
			// The CLI's records: a worker serves every project, so it takes the
			// backend flags (or KUMO_BACKEND) but reads no project.yaml.
			b, err := client.OpenBackend(c.Context, backendFlags(c))
			if err != nil {
				return err
			}
			var opts sdkclient.Options
			if !globalBool(c, "debug") {
				opts.Logger = sdklog.NewStructuredLogger(quietLogger())
			}
			tc, err := client.Dial(c.Context, conn, opts, client.DialOptions{})
			if err != nil {
				return err
			}
			defer tc.Close()
			if err := client.CheckSearchAttributes(c.Context, tc, conn); err != nil {
				return err
			}
			w := worker.New(tc, b)
			fmt.Fprintf(os.Stderr, "kumo worker polling task queue %q on %s (namespace %s)\n", "kumo", conn.Address, conn.Namespace)
			if err := w.Start(); err != nil {
				return err
			}
			<-c.Context.Done()
			w.Stop()
			return nil
		},
	}
}
