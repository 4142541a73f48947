package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
)

func temporalCommand() *cli.Command {
	return &cli.Command{
		Name:  "temporal",
		Usage: "prepare an existing Temporal cluster for kumo",
		Subcommands: []*cli.Command{{
			Name:  "setup",
			Usage: "register kumo's search attributes in the namespace (--temporal-address, --temporal-namespace)",
			Action: func(c *cli.Context) error {
				opts, err := openOptions(c)
				if err != nil {
					return err
				}
				// Registering search attributes sends no payload and writes
				// no release: the cluster's operator may run it before a
				// codec key is handed out. A key given is used all the same.
				opts.InsecurePlaintext = true
				kc, err := client.OpenContext(c.Context, opts)
				if err != nil {
					return err
				}
				defer kc.CloseBeforeExit()
				attrs, err := kc.SetupTemporal(c.Context)
				if err != nil {
					return err
				}
				for _, a := range attrs {
					fmt.Printf("search attribute %s (%s) is registered in namespace %s\n", a.Name, a.Type, global(c, "temporal-namespace"))
				}
				return nil
			},
		}},
	}
}
