package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/worker"
)

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "run a kumo worker against an existing Temporal cluster (--temporal-address)",
		Action: func(c *cli.Context) error {
			address := global(c, "temporal-address")
			if address == "" {
				return errors.New("kumo worker needs --temporal-address (or TEMPORAL_ADDRESS): the Temporal frontend to poll")
			}
			home := global(c, "home")
			if home == "" {
				home = client.DefaultHome()
			}
			b, err := local.New(home)
			if err != nil {
				return err
			}
			opts := sdkclient.Options{HostPort: address, Namespace: global(c, "namespace")}
			if !globalBool(c, "debug") {
				opts.Logger = sdklog.NewStructuredLogger(quietLogger())
			}
			tc, err := sdkclient.DialContext(c.Context, opts)
			if err != nil {
				return fmt.Errorf("connect to Temporal at %s: %w", address, err)
			}
			defer tc.Close()
			w := worker.New(tc, b)
			fmt.Fprintf(os.Stderr, "kumo worker polling task queue %q on %s (namespace %s)\n", "kumo", address, global(c, "namespace"))
			if err := w.Start(); err != nil {
				return err
			}
			<-c.Context.Done()
			w.Stop()
			return nil
		},
	}
}
