package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/internal/keyring"
)

func codecCommand() *cli.Command {
	return &cli.Command{
		Name:  "codec",
		Usage: "the keys that encrypt Temporal payloads and release secrets",
		Subcommands: []*cli.Command{{
			Name:      "new-key",
			Usage:     "add a key to a codec key file (creating it, mode 0600): it encrypts from now on, older keys still decrypt",
			ArgsUsage: "[FILE]",
			Description: "FILE defaults to --codec-key-file (KUMO_CODEC_KEY_FILE), else $KUMO_HOME/codec.keys.\n" +
				"Every worker and client of a Temporal cluster must read the same file; restart them after adding a key.",
			Action: func(c *cli.Context) error {
				path := c.Args().First()
				if path == "" {
					path = global(c, "codec-key-file")
				}
				if path == "" {
					home := global(c, "home")
					if home == "" {
						home = client.DefaultHome()
					}
					path = filepath.Join(home, keyring.FileName)
				}
				id, err := keyring.AddKey(path)
				if err != nil {
					return err
				}
				fmt.Printf("key %s added to %s; it encrypts from now on\n", id, path)
				return nil
			},
		}},
	}
}
