package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine/drift"
)

func driftCommand() *cli.Command {
	output := outputFlag(formatTable, formatJSON)
	return &cli.Command{
		Name:  "drift",
		Usage: "compare the latest succeeded release with what is live",
		Subcommands: []*cli.Command{
			{
				Name: "check",
				Usage: "run a drift check now and print its report; exit 0 in sync, 2 drift found, " +
					"1 error (as terraform plan -detailed-exitcode)",
				Flags:  append([]cli.Flag{output}, checkFlags()...),
				Action: driftCheck,
			},
			{
				Name:   "report",
				Usage:  "show the last stored drift report (or that of --check RUN)",
				Flags:  []cli.Flag{output, &cli.StringFlag{Name: "check", Usage: "run ID of the check"}},
				Action: driftReport,
			},
			driftScheduleCommand(),
		},
	}
}

// checkFlags are the flags of a check, run now or scheduled.
func checkFlags() []cli.Flag {
	return []cli.Flag{
		stackFlag(),
		&cli.IntFlag{Name: "parallelism", Value: 10, Usage: "how many resources to read at once"},
		&cli.StringFlag{Name: "mode", Value: drift.ModeWarn, Usage: "warn: report only; remediate: re-apply the checked release when drift is found (drift.remediation bounds it)"},
	}
}

// driftRequest reads the check flags and the project's drift config.
func driftRequest(c *cli.Context, kc *client.Client, t target) (client.DriftRequest, error) {
	s, err := kc.Settings(c.Context, t.Workspace, settings(c))
	if err != nil {
		return client.DriftRequest{}, err
	}
	req := client.DriftRequest{Project: t.Project, Workspace: t.Workspace, Settings: s, Parallelism: c.Int("parallelism"), Mode: c.String("mode")}
	if p, _, err := nearestProject(c); err != nil {
		return req, err
	} else if p != nil && p.Name == t.Project {
		req.ProjectDrift = p.Drift
	}
	return req, nil
}

func driftCheck(c *cli.Context) error {
	return withClient(c, func(kc *client.Client, t target) error {
		req, err := driftRequest(c, kc, t)
		if err != nil {
			return err
		}
		r, err := kc.CheckDrift(c.Context, req)
		if err != nil {
			return err
		}
		return reportExit(c, r)
	})
}

// reportExit prints r and exits as terraform plan -detailed-exitcode does.
func reportExit(c *cli.Context, r *drift.Report) error {
	if err := printReport(c, r); err != nil {
		return err
	}
	return driftExit(r)
}

// driftExit is the exit of a check that found r: drift found is a result the
// report has shown (exit 2, no error printed); resources that could not be
// checked are an error (exit 1).
func driftExit(r *drift.Report) error {
	switch r.ExitCode() {
	case 2:
		return &exitError{code: 2}
	case 1:
		return &exitError{code: 1, err: fmt.Errorf("%s: %d resources could not be checked", r.Summary(), r.Counts.Error)}
	}
	return nil
}

func driftReport(c *cli.Context) error {
	return withClient(c, func(kc *client.Client, t target) error {
		r, err := kc.DriftReport(c.Context, t.Project, t.Workspace, c.String("check"))
		if err != nil {
			return err
		}
		return printReport(c, r)
	})
}

func printReport(c *cli.Context, r *drift.Report) error {
	return printOutput(c, r, func() error {
		writeReport(os.Stdout, r)
		return nil
	})
}

// writeReport prints a report for people: the summary, then each resource not
// in sync with its fields (path, recorded -> live, and who owns the live value).
func writeReport(w io.Writer, r *drift.Report) {
	fmt.Fprintf(w, "%s (check %s at %s)\n", r.Summary(), r.RunID, r.CheckTime.Local().Format(time.DateTime))
	if st := r.Remediation; st != nil && st.Outcome != "" {
		line := fmt.Sprintf("remediation %s: %s", st.WorkflowID, st.Outcome)
		if st.Revision > 0 {
			line += fmt.Sprintf(", revision %d", st.Revision)
		}
		if st.Error != "" {
			line += ": " + st.Error
		}
		fmt.Fprintln(w, line)
	}
	for _, res := range r.Resources {
		since := ""
		if res.ConsecutiveChecks > 0 {
			since = fmt.Sprintf("  (since %s, %d checks)", res.FirstSeen.Local().Format(time.DateTime), res.ConsecutiveChecks)
		}
		fmt.Fprintf(w, "%-8s %s%s\n", res.Status, res.ID, since)
		if res.Error != "" {
			fmt.Fprintf(w, "         %s\n", res.Error)
		}
		for _, f := range res.Fields {
			fmt.Fprintf(w, "         %s\n", fieldLine(f))
		}
		for _, f := range res.Ignored {
			fmt.Fprintf(w, "         ignored %s [%s]\n", fieldLine(f), f.IgnoredBy)
		}
	}
}

func fieldLine(f drift.Field) string {
	live := showValue(f.Live)
	if f.Absent {
		live = "(absent)"
	}
	s := fmt.Sprintf("%s: %s -> %s", f.Path, showValue(f.Recorded), live)
	if f.Manager != "" {
		s += " by " + f.Manager
	}
	return s
}
