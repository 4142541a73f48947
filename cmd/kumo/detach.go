package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
)

func detachFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "start the run in kumo server (or on --temporal-address's workers), print its ID and Web UI link, and exit"}
}

// followOrDetach follows the run to its end, or with --detach says where it
// goes on and returns at once.
func followOrDetach(ctx context.Context, c *cli.Context, kc *client.Client, run *client.Run, interactive bool) error {
	if !c.Bool("detach") {
		return follow(ctx, run, interactive)
	}
	fmt.Printf("Started %s run %s (workflow %s).\n", run.Operation, run.RunID, run.WorkflowID)
	if u := kc.RunPageURL(run.RunID); u != "" {
		fmt.Printf("Page:   %s\n", u)
	}
	if srv := kc.Server(); srv != nil {
		if u := srv.RunURL(run.WorkflowID, run.RunID); u != "" {
			fmt.Printf("Web UI: %s\n", u)
		}
		fmt.Printf("It goes on in kumo server (pid %d).", srv.PID)
	} else {
		fmt.Print("It goes on on the Temporal cluster's workers.")
	}
	if interactive {
		fmt.Printf(" It waits for approval after its preview: `kumo approve %s` (or `kumo resume`, which shows the plan and asks).", run.RunID)
	}
	fmt.Println(" `kumo resume` follows it; `kumo release list` shows its release.")
	return nil
}
