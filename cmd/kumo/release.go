package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

func releaseCommand() *cli.Command {
	return &cli.Command{
		Name:  "release",
		Usage: "inspect and unlock the releases of a project+workspace; forget or move what they record",
		Subcommands: append([]*cli.Command{
			{
				Name:   "list",
				Usage:  "list every kept revision (a server's --retain-releases removes the older ones)",
				Flags:  []cli.Flag{outputFlag(formatTable, formatJSON)},
				Action: releaseList,
			},
			{
				Name:  "show",
				Usage: "show one revision in full",
				Flags: []cli.Flag{outputFlag(formatYAML, formatJSON), &cli.IntFlag{Name: "revision", Usage: "revision (default: latest)"},
					&cli.BoolFlag{Name: "reveal", Usage: "show Secret data and sensitive Terraform attributes (decrypted with the codec key) instead of " + engine.Masked}},
				Action: releaseShow,
			},
			{
				Name:      "diff",
				Usage:     "show how the specs of two revisions differ, resource by resource and field by field",
				ArgsUsage: "A B",
				Flags:     []cli.Flag{outputFlag(formatTable, formatJSON)},
				Action:    releaseDiff,
			},
			{
				Name:  "unlock",
				Usage: "mark the latest release failed when the run that owned it is gone",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "squatter", Usage: "also terminate a workflow that holds the stack's lock but is not a kumo run (needs admin on the stack)"},
				},
				Action: releaseUnlock,
			},
		}, surgeryCommands()...),
	}
}

// releaseRow is one line of `release list`, the same fields in table and JSON.
type releaseRow struct {
	Revision int    `json:"revision"`
	Stack    string `json:"stack,omitempty"`
	// Chart is the Helm chart the spec was rendered from: name@version.
	Chart     string           `json:"chart,omitempty"`
	Operation engine.Operation `json:"operation"`
	Phase     engine.Phase     `json:"phase"`
	SpecHash  string           `json:"specHash"`
	Resources int              `json:"resources"`
	Created   time.Time        `json:"createTime"`
	Modified  time.Time        `json:"modifyTime"`
	// Size is what the release keeps in storage, in bytes: its release file
	// and state chunks, compressed (backend.ReleaseSummary.Stored).
	Size       int `json:"size"`
	RollbackOf int `json:"rollbackOf,omitempty"`
	// Compensated counts the resources a failed apply put back (--rollback-on-failure).
	Compensated int    `json:"compensated,omitempty"`
	RunID       string `json:"runID,omitempty"`
	Error       string `json:"error,omitempty"`
	// Drift is the latest drift check's summary, on the revision it checked,
	// when that check found the stack not in sync.
	Drift string `json:"drift,omitempty"`
	// ReleaseLabel is the release's version, message and source commit.
	engine.ReleaseLabel
	// Git is the git source commit the release deployed, if it came from one.
	Git *engine.GitOrigin `json:"git,omitempty"`
}

func releaseList(c *cli.Context) error {
	return withClient(c, func(kc *client.Client, t target) error {
		// Summaries: the release files alone, never the specs and states.
		summaries, err := kc.ReleaseSummaries(c.Context, t.Project, t.Workspace)
		if err != nil {
			return err
		}
		rows := make([]releaseRow, 0, len(summaries))
		for _, sum := range summaries {
			r, n := sum.Release, sum.StateResources
			compensated := 0
			if r.Compensation != nil {
				compensated = len(r.Compensation.Resources)
			}
			chartName := ""
			if r.Chart != nil {
				chartName = r.Chart.Chart + "@" + r.Chart.Version
			}
			rows = append(rows, releaseRow{r.Revision, r.Stack, chartName, r.Operation, r.Phase, r.SpecHash, n, r.CreateTime, r.ModifyTime, int(sum.Stored), r.RollbackOf, compensated, r.RunID, r.Error, "", r.Label, r.Git})
		}
		drifted := markDrift(c, kc, t, rows)
		return printOutput(c, rows, func() error { return printReleases(rows, t, drifted) })
	})
}

// printReleases draws the table of `release list`, and where the latest drift
// check found the stack not in sync.
func printReleases(rows []releaseRow, t target, drifted string) error {
	if len(rows) == 0 {
		fmt.Printf("%s/%s has no releases yet.\n", t.Project, t.Workspace)
		return nil
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tVERSION\tSTACK/CHART\tSOURCE\tOPERATION\tPHASE\tSPEC HASH\tRESOURCES\tCREATED\tDURATION\tSIZE\tROLLBACK OF")
	for _, r := range rows {
		rollbackOf := ""
		if r.RollbackOf > 0 {
			rollbackOf = fmt.Sprint(r.RollbackOf)
		}
		operation := string(r.Operation)
		if r.Compensated > 0 {
			operation += "+compensate"
		}
		phase := string(r.Phase)
		if r.Drift != "" {
			phase += " (drifted)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%.16s\t%d\t%s\t%s\t%s\t%s\n", r.Revision, orDash(r.Version), orDash(r.Stack+r.Chart), orDash(gitOrigin(r.Git)), operation, phase, r.SpecHash, r.Resources,
			r.Created.Local().Format("2006-01-02 15:04:05"), r.Modified.Sub(r.Created).Round(10*time.Millisecond), humanBytes(r.Size), orDash(rollbackOf))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch oldest := rows[0].Revision; {
	case oldest == 2:
		fmt.Println("\nRevision 1 was removed by the release history limit (--retain-releases).")
	case oldest > 2:
		fmt.Printf("\nRevisions 1 to %d were removed by the release history limit (--retain-releases).\n", oldest-1)
	}
	if drifted != "" {
		fmt.Printf("\n%s; `kumo drift report` shows it.\n", drifted)
	}
	return nil
}

// markDrift sets Drift on the row of the revision the latest drift check
// found not in sync, and returns that check's summary ("" when in sync, or no
// check was stored). A report that cannot be read marks nothing: the list is
// about releases.
func markDrift(c *cli.Context, kc *client.Client, t target, rows []releaseRow) string {
	r, err := kc.Backend().DriftReport(c.Context, t.Project, t.Workspace, "")
	if err != nil || !r.Drifted() {
		return ""
	}
	s := fmt.Sprintf("%s (check %s at %s)", r.Summary(), r.RunID, r.CheckTime.Local().Format(time.DateTime))
	for i := range rows {
		if rows[i].Revision == r.Revision {
			rows[i].Drift = s
		}
	}
	return s
}

func releaseShow(c *cli.Context) error {
	return withClient(c, func(kc *client.Client, t target) error {
		r, err := kc.Release(c.Context, t.Project, t.Workspace, c.Int("revision"))
		if err != nil {
			return err
		}
		if !c.Bool("reveal") {
			client.MaskRelease(r)
		}
		return printOutput(c, r, nil)
	})
}

func releaseDiff(c *cli.Context) error {
	args, err := positionalArgs(c)
	if err != nil {
		return err
	}
	if len(args) != 2 {
		return fmt.Errorf("release diff needs two revisions, e.g. `kumo release diff 1 2`")
	}
	var revs [2]int
	for i := range revs {
		n, err := strconv.Atoi(args[i])
		if err != nil || n < 1 {
			return fmt.Errorf("release diff: %q is not a revision number", args[i])
		}
		revs[i] = n
	}
	return withClient(c, func(kc *client.Client, t target) error {
		changes, err := kc.DiffReleases(c.Context, t.Project, t.Workspace, revs[0], revs[1])
		if err != nil {
			return err
		}
		return printOutput(c, map[string]any{"from": revs[0], "to": revs[1], "changes": changes}, func() error {
			if len(changes) == 0 {
				fmt.Printf("No differences between the specs of revisions %d and %d.\n", revs[0], revs[1])
				return nil
			}
			for _, ch := range changes {
				fmt.Printf("%-8s %s\n", ch.Kind, ch.ID)
				for _, f := range ch.Fields {
					fmt.Printf("         %s: %s -> %s\n", f.Path, showValue(f.Before), showValue(f.After))
				}
			}
			return nil
		})
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

func releaseUnlock(c *cli.Context) error {
	return withClient(c, func(kc *client.Client, t target) error {
		var s *client.SquatterError
		if c.Bool("squatter") {
			var err error
			if s, err = kc.ClearSquatter(c.Context, t.Project, t.Workspace); err != nil {
				return err
			}
			if s == nil {
				fmt.Printf("No workflow squats on %s/%s.\n", t.Project, t.Workspace)
			}
		}
		if s != nil {
			fmt.Printf("Terminated workflow %s (run %s, type %q), which held %s/%s and was not a kumo run.\n", s.WorkflowID, s.RunID, s.Type, t.Project, t.Workspace)
		}
		r, err := kc.Unlock(c.Context, t.Project, t.Workspace)
		if c.Bool("squatter") && (errors.Is(err, client.ErrNotLocked) || errors.Is(err, client.ErrNoReleases)) {
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Printf("Revision %d of %s/%s is now %s.\n", r.Revision, t.Project, t.Workspace, r.Phase)
		return nil
	})
}

// target is the project and workspace a command works on.
type target struct {
	Project, Workspace string
}

// withClient runs fn with a client for the command's flags, the project name and
// the workspace (--workspace, else the one `kumo workspace switch` chose).
func withClient(c *cli.Context, fn func(kc *client.Client, t target) error) error {
	return withProject(c, func(kc *client.Client, project string) error {
		workspace, err := workspaceName(c, kc)
		if err != nil {
			return err
		}
		return fn(kc, target{Project: project, Workspace: workspace})
	})
}

// gitOrigin is a release's git source as a table cell: source@ref and the
// commit's first 12 digits.
func gitOrigin(g *engine.GitOrigin) string {
	if g == nil {
		return ""
	}
	return fmt.Sprintf("%s@%s %.12s", g.Source, g.Ref, g.Commit)
}
