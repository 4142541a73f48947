package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
)

// gcFlags are the retention settings of kumo's own records, the same on
// `kumo server` (its GC schedule) and `kumo backend gc`.
func gcFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "retain-run-logs", Value: "30d", Usage: "how long a run's log is kept (counted from when a collection first saw it)"},
		&cli.StringFlag{Name: "retain-drift-reports", Value: "30d", Usage: "how long a drift report is kept after its check (each stack's newest is always kept)"},
		&cli.StringFlag{Name: "retain-idempotency-keys", Value: "24h", Usage: "how long the HTTP API remembers an Idempotency-Key"},
		&cli.StringFlag{Name: "retain-audit", Usage: "how long audit log entries are kept, by whole days, at least 1d (default: forever)"},
		&cli.StringFlag{Name: "gc-grace", Value: "1h", Usage: "how long a spec or state chunk no release names (a preview's, a create that lost a race) must have been seen unreferenced before it is removed, at least 10m"},
		&cli.IntFlag{Name: "retain-releases", Usage: "how many release revisions of each project/workspace are kept, the newest (0: every one, the default; else at least 2). " +
			"The newest succeeded revision, which a rollback restores, and the prior of a running release stay too; a rollback to a removed revision is refused"},
	}
}

// gcPolicy reads gcFlags.
func gcPolicy(c *cli.Context) (client.GCPolicy, error) {
	var p client.GCPolicy
	for _, f := range []struct {
		name string
		to   *time.Duration
	}{
		{"retain-run-logs", &p.RunLogs}, {"retain-drift-reports", &p.DriftReports},
		{"retain-idempotency-keys", &p.Requests}, {"retain-audit", &p.Audit}, {"gc-grace", &p.Grace},
	} {
		d, err := parseDays(f.name, c.String(f.name))
		if err != nil {
			return p, err
		}
		*f.to = d
	}
	p.Releases = c.Int("retain-releases")
	if err := client.ValidateReleaseRetention(p.Releases); err != nil {
		return p, fmt.Errorf("--retain-releases %d: %w", p.Releases, err)
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("--retain-*/--gc-grace: %w", err)
	}
	return p, nil
}

func backendGCCommand() *cli.Command {
	return &cli.Command{
		Name: "gc",
		Usage: "remove kumo's expired and unreferenced records now: run logs, drift reports and idempotency keys past their retention, " +
			"specs and state chunks no release names (after --gc-grace), audit days past --retain-audit and release revisions past --retain-releases (each only when set). " +
			"A kumo server does this on its schedule (--gc-every)",
		Flags: append(gcFlags(),
			&cli.BoolFlag{Name: "dry-run", Usage: "only list what would be removed; write nothing"},
			outputFlag(formatTable, formatJSON),
		),
		Action: backendGC,
	}
}

func backendGC(c *cli.Context) error {
	p, err := gcPolicy(c)
	if err != nil {
		return err
	}
	opts, err := backendOptions(c)
	if err != nil {
		return err
	}
	rep, err := client.CollectBackend(c.Context, opts, p, time.Now(), c.Bool("dry-run"))
	if err != nil {
		return err
	}
	return printOutput(c, rep, func() error {
		verb := "Removed"
		if rep.DryRun {
			verb = "Would remove"
		}
		for _, k := range rep.Removed {
			fmt.Printf("%s %s\n", verb, k)
		}
		for _, k := range rep.Restored {
			fmt.Printf("Kept %s: a release written meanwhile names it\n", k)
		}
		for _, p := range rep.Pruned {
			fmt.Printf("%s revisions %s of %s/%s; the oldest kept is %d\n", verb, p.Ranges(), p.Project, p.Workspace, p.Floor)
		}
		fmt.Printf("%s %d records: %d release revisions, %d run logs, %d drift reports, %d idempotency keys, %d audit days, %d specs and %d state chunks no release names (%d bytes), %d leftover state directories.\n",
			verb, rep.Total(), rep.Revisions, rep.RunLogs, rep.DriftReports, rep.Requests, rep.AuditDays, rep.Specs, rep.Chunks, rep.Bytes, rep.StateDirs)
		kept := "all kept"
		if rep.Revisions > 0 {
			kept = fmt.Sprintf("%d past --retain-releases", rep.Revisions)
		}
		fmt.Printf("Read %d releases (%s); %d candidates wait for their grace or retention.\n", rep.Releases, kept, rep.Waiting)
		return nil
	})
}

// serverGC reads the server's GC settings: the policy and --gc-every (0: no
// schedule).
func serverGC(c *cli.Context) (client.GCPolicy, time.Duration, error) {
	p, err := gcPolicy(c)
	if err != nil {
		return p, 0, err
	}
	if c.String("gc-every") == "0" {
		return p, 0, nil
	}
	every, err := parseDays("gc-every", c.String("gc-every"))
	if err != nil {
		return p, 0, err
	}
	if every < client.MinGCInterval {
		return p, 0, fmt.Errorf("--gc-every %s: the shortest is %s (0: no schedule)", every, client.MinGCInterval)
	}
	return p, every, nil
}

// keepGCSchedule creates or updates the server's GC schedule, or removes it
// with --gc-every 0.
func keepGCSchedule(c *cli.Context, owner *client.Client, p client.GCPolicy, every time.Duration) error {
	if every == 0 {
		return owner.DeleteGCSchedule(c.Context)
	}
	return owner.EnsureGCSchedule(c.Context, p, every)
}

// gcSummary says what a policy keeps, for the server's banner.
func gcSummary(p client.GCPolicy) string {
	audit := "audit log kept"
	if p.Audit > 0 {
		audit = "audit log " + p.Audit.String()
	}
	return fmt.Sprintf("releases: %s, run logs %s, drift reports %s, idempotency keys %s, %s, unreferenced specs and chunks after %s", client.ReleasesKept(p), p.RunLogs, p.DriftReports, p.Requests, audit, p.Grace)
}
