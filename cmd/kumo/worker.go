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
			address := global(c, "temporal-address")
			if address == "" {
				return errors.New("kumo worker needs --temporal-address (or TEMPORAL_ADDRESS): the Temporal frontend to poll")
			}
			// The CLI's records: a worker serves every project, so it takes the
			// backend flags (or KUMO_BACKEND) but reads no project.yaml.
			b, err := client.OpenBackend(c.Context, backendFlags(c))
			if err != nil {
				return err
			}
			namespace, err := temporalNamespace(c)
			if err != nil {
				return err
			}
			opts := sdkclient.Options{HostPort: address, Namespace: namespace}
			if !globalBool(c, "debug") {
				opts.Logger = sdklog.NewStructuredLogger(quietLogger())
			}
			tc, err := sdkclient.DialContext(c.Context, opts)
			if err != nil {
				return fmt.Errorf("connect to Temporal at %s: %w", address, err)
			}
			defer tc.Close()
			w := worker.New(tc, b)
			fmt.Fprintf(os.Stderr, "kumo worker polling task queue %q on %s (namespace %s)\n", "kumo", address, namespace)
			if err := w.Start(); err != nil {
				return err
			}
			<-c.Context.Done()
			w.Stop()
			return nil
		},
	}
}
