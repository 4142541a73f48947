package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

func waitFlag() cli.Flag {
	return &cli.StringFlag{Name: "wait", Value: engine.WaitHealthy,
		Usage: "when an applied resource counts as done, so its dependents may start: healthy or applied (per resource: extensions " + engine.ExtWait + ")"}
}

func timeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: "timeout", Value: engine.DefaultWaitTimeout,
		Usage: "how long to wait for each resource to become healthy before failing it (per resource: extensions " + engine.ExtTimeout + ")"}
}

// setWait copies --wait and --timeout into req, refusing values the run
// could not use.
func setWait(c *cli.Context, req *client.Request) error {
	switch w := c.String("wait"); w {
	case engine.WaitHealthy, engine.WaitApplied:
		req.Wait = w
	default:
		return fmt.Errorf("--wait %q: want %s or %s", w, engine.WaitHealthy, engine.WaitApplied)
	}
	if req.Timeout = c.Duration("timeout"); req.Timeout <= 0 {
		return fmt.Errorf("--timeout %v: want a positive duration", req.Timeout)
	}
	return nil
}
