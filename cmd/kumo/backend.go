package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
)

func backendCommand() *cli.Command {
	return &cli.Command{
		Name:  "backend",
		Usage: "manage where releases, state, workspaces and run logs live",
		Subcommands: []*cli.Command{{
			Name: "migrate",
			Usage: "copy every record (releases, specs, in-flight state, workspaces, run logs, drift reports, audit log) from one backend to another, " +
				"verifying counts and hashes (--project P: only P's releases, drift reports, specs and run logs, and the workspaces); refused while a run holds a stack, or when the destination holds a different record",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "from", Required: true, Usage: "the backend to copy from: file:///dir, s3://bucket/prefix, postgres://user@host/db, https://state-service/path"},
				&cli.StringFlag{Name: "to", Required: true, Usage: "the backend to copy to (same forms)"},
				outputFlag(formatTable, formatJSON),
			},
			Action: backendMigrate,
		}, backendGCCommand()},
	}
}

func backendMigrate(c *cli.Context) error {
	from, to := backendFlags(c), backendFlags(c)
	from.Backend, to.Backend = c.String("from"), c.String("to")
	// --project (or KUMO_PROJECT) narrows the copy to one project's records;
	// unlike other commands, no project is taken from the current directory.
	project := globalSet(c, "project")
	rep, err := client.MigrateBackend(c.Context, from, to, project)
	if err != nil {
		return err
	}
	return printOutput(c, rep, func() error {
		what := "every record"
		if project != "" {
			what = "project " + project
		}
		fmt.Printf("Copied %s: %d records (%d bytes; %d were already there).\n", what, rep.Records, rep.Bytes, rep.Present)
		fmt.Printf("Verified: all %d records read back with the same SHA-256; digest %s\n", rep.Records, rep.Digest)
		return nil
	})
}
