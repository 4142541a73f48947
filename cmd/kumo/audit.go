package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

func auditCommand() *cli.Command {
	return &cli.Command{
		Name: "audit",
		Usage: "list the audit log: who was allowed or denied what, where and when (starts, approvals, rejections, cancels, " +
			"unlocks, schedule, token and workspace changes), as kept in the backend",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "since", Usage: "only entries this recent, e.g. 24h (default: all)"},
			outputFlag(formatTable, formatJSON),
		},
		Action: auditList,
	}
}

// auditList lists the audit log, filtered by --project and --workspace only
// when they are given (the log is not one project's).
func auditList(c *cli.Context) error {
	since := c.Duration("since")
	if since < 0 {
		return fmt.Errorf("--since %s: want a positive duration", since)
	}
	f := client.AuditFilter{Project: global(c, "project"), Workspace: global(c, "workspace")}
	if since > 0 {
		f.Since = time.Now().Add(-since)
	}
	kc, err := open(c)
	if err != nil {
		return err
	}
	defer kc.CloseBeforeExit()
	entries, err := kc.Audit(c.Context, f)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []client.AuditRecord{}
	}
	return printOutput(c, entries, func() error {
		if len(entries) == 0 {
			fmt.Println("No audit entries.")
			return nil
		}
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tSUBJECT\tACTION\tWHERE\tTARGET\tRESULT\tREASON")
		for _, e := range entries {
			where := "-"
			if e.Project != "" || e.Workspace != "" {
				where = orDash(e.Project) + "/" + orDash(e.Workspace)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format(time.DateTime), engine.DisplayName(e.Subject, e.Verified),
				e.Action, where, orDash(e.Target), e.Result, oneLine(e.Reason))
		}
		return tw.Flush()
	})
}
