package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func temporalCommand() *cli.Command {
	return &cli.Command{
		Name:  "temporal",
		Usage: "prepare an existing Temporal cluster for kumo",
		Subcommands: []*cli.Command{{
			Name:  "setup",
			Usage: "register kumo's search attributes in the namespace (--temporal-address, --temporal-namespace)",
			Action: func(c *cli.Context) error {
				kc, err := open(c)
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
