package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/server/embedded"
)

func temporalCommand() *cli.Command {
	return &cli.Command{
		Name:  "temporal",
		Usage: "prepare an existing Temporal cluster for kumo",
		Subcommands: []*cli.Command{{
			Name:  "setup",
			Usage: "register the namespace if it does not exist, and kumo's search attributes in it (--temporal-address, --temporal-namespace); safe to run again",
			Flags: []cli.Flag{&cli.DurationFlag{
				Name: "retention", Value: embedded.DefaultRetention,
				Usage: "how long Temporal keeps closed runs, for a namespace this registers (an existing one keeps its own)",
			}},
			Action: func(c *cli.Context) error {
				opts, err := openOptions(c)
				if err != nil {
					return err
				}
				if r := c.Duration("retention"); r < embedded.MinRetention {
					return fmt.Errorf("--retention %s: Temporal keeps closed workflows at least %s", r, embedded.MinRetention)
				}
				opts.RegisterNamespace = c.Duration("retention")
				// Registering search attributes sends no payload and writes
				// no release: the cluster's operator may run it before a
				// codec key is handed out. A key given is used all the same.
				opts.InsecurePlaintext = true
				kc, err := client.OpenContext(c.Context, opts)
				if err != nil {
					return err
				}
				defer kc.CloseBeforeExit()
				setup, err := kc.SetupTemporal(c.Context)
				if err != nil {
					return err
				}
				fmt.Printf("namespace %s keeps closed runs for %s\n", setup.Namespace, setup.Retention)
				for _, a := range setup.Attributes {
					fmt.Printf("search attribute %s (%s) is registered in namespace %s\n", a.Name, a.Type, setup.Namespace)
				}
				return nil
			},
		}},
	}
}
