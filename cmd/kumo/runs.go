package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
)

// Exit codes of `kumo run wait` (and of commands that follow a run).
const (
	exitFailed    = 1
	exitCancelled = 2
	exitTimeout   = 3
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "list, show, wait for and cancel runs; print their logs",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list runs of the project, newest first, from Temporal's visibility store",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "operation", Usage: strings.Join(client.RunOperations, ", ")},
					&cli.StringFlag{Name: "status", Usage: strings.Join(client.RunStatuses, ", ")},
					&cli.IntFlag{Name: "limit", Value: client.DefaultRunLimit, Usage: "list at most this many runs"},
					outputFlag(formatTable, formatJSON),
				},
				Action: runList,
			},
			{
				Name:      "show",
				Usage:     "show a run: status, revision, times, plan, each resource's outcome, its Web UI page, and its own page when kumo server serves one",
				ArgsUsage: "RUN_ID",
				Flags:     []cli.Flag{outputFlag(formatTable, formatJSON)},
				Action:    runShow,
			},
			{
				Name:      "wait",
				Usage:     "follow a run to its end; exit 0 succeeded, 1 failed, 2 cancelled or not approved, 3 timeout",
				ArgsUsage: "RUN_ID",
				Flags:     []cli.Flag{&cli.DurationFlag{Name: "timeout", Usage: "give up waiting after this long (the run goes on)"}},
				Action:    runWait,
			},
			{
				Name: "cancel",
				Usage: "cancel a run: no resource starts any more, the ones in flight finish, --rollback-on-failure undoes the apply, " +
					"and the release ends failed with the reason",
				ArgsUsage: "RUN_ID",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "reason", Usage: "why, recorded as the release's error (default: who cancelled it)"},
					&cli.BoolFlag{Name: "no-wait", Usage: "return once the cancel is requested instead of following the run to its end"},
				},
				Action: runCancel,
			},
			runLogsCommand(),
		},
	}
}

// runRow is one run of `run list -o json`: the listing and its duration.
type runRow struct {
	client.RunInfo
	Duration time.Duration `json:"duration"`
}

func runList(c *cli.Context) error {
	// Only a workspace asked for narrows the list; the current one does not.
	filter := client.RunFilter{Workspace: global(c, "workspace"), Operation: c.String("operation"), Status: c.String("status"), Limit: c.Int("limit")}
	if _, err := filter.Query(); err != nil {
		return err
	}
	return withClient(c, func(kc *client.Client, t target) error {
		filter.Project = t.Project
		runs, err := kc.ListRuns(c.Context, filter)
		if err != nil {
			return explainLocked(err)
		}
		now := time.Now()
		rows := make([]runRow, len(runs))
		for i, r := range runs {
			rows[i] = runRow{r, r.Duration(now)}
		}
		return printOutput(c, rows, func() error {
			if len(runs) == 0 {
				fmt.Printf("No runs of project %s match.\n", t.Project)
				return nil
			}
			return printRuns(os.Stdout, runs, now)
		})
	})
}

// printRuns renders runs as `run list` does.
func printRuns(w io.Writer, runs []client.RunInfo, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN ID\tOPERATION\tSTACK\tSTATUS\tREVISION\tSTARTED\tDURATION\tCHANGES")
	for _, r := range runs {
		revision := "-"
		if r.Revision > 0 {
			revision = fmt.Sprint(r.Revision)
		}
		status := r.Status
		if r.Position > 0 {
			status = fmt.Sprintf("%s (%d)", status, r.Position) // its place in the stack's run queue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.RunID, r.Operation, orDash(r.Stack), status, revision,
			r.Started.Local().Format(time.DateTime), formatDuration(r.Duration(now)), changeCounts(r.Changes))
	}
	return tw.Flush()
}

// changeCounts is the CHANGES column: `+create ~update -delete`, or - when the
// run has no preview (yet).
func changeCounts(c *runspec.ChangeCounts) string {
	if c == nil {
		return "-"
	}
	return c.String()
}

// formatDuration rounds a duration to what a person reads: milliseconds below
// a second, tenths of a second below a minute, then seconds, then minutes.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// runArg is the one RUN_ID a run subcommand takes.
func runArg(c *cli.Context) (string, error) {
	args, err := positionalArgs(c)
	if err != nil {
		return "", err
	}
	if len(args) != 1 {
		return "", fmt.Errorf("want one RUN_ID (printed by the command that started the run; `kumo run list` lists them), got %d arguments", len(args))
	}
	return args[0], nil
}

// withRunClient runs fn with the RUN_ID argument, the project and a client.
func withRunClient(c *cli.Context, fn func(kc *client.Client, project, runID string) error) error {
	runID, err := runArg(c)
	if err != nil {
		return err
	}
	return withClient(c, func(kc *client.Client, t target) error {
		return explainLocked(fn(kc, t.Project, runID))
	})
}

// explainLocked adds what to do to the error of a home whose embedded
// Temporal another kumo holds.
func explainLocked(err error) error {
	if errors.Is(err, embedded.ErrLocked) {
		return fmt.Errorf("%w\nAnother kumo is running on this home with its own Temporal server; its runs can be looked at, waited for and cancelled from another terminal when they run under `kumo server` or an existing Temporal (--temporal-address)", err)
	}
	return err
}

func runShow(c *cli.Context) error {
	return withRunClient(c, func(kc *client.Client, project, runID string) error {
		d, err := kc.ShowRun(c.Context, project, runID)
		if err != nil {
			return err
		}
		now := time.Now()
		return printOutput(c, runDetailsJSON{d, d.Duration(now)}, func() error {
			printRunDetails(os.Stdout, d, now)
			return nil
		})
	})
}

type runDetailsJSON struct {
	*client.RunDetails
	Duration time.Duration `json:"duration"`
}

// printRunDetails renders `run show`.
func printRunDetails(w io.Writer, d *client.RunDetails, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	line("Run:", d.RunID)
	line("Operation:", d.Operation)
	line("Project:", d.Project)
	line("Workspace:", d.Workspace)
	line("Stack:", d.Stack)
	status := d.Status
	if d.Running() && d.Stage != "" && string(d.Stage) != d.Status {
		status += " (" + string(d.Stage) + ")"
	}
	if d.Waiting != "" {
		status += ": " + d.Waiting
	}
	line("Status:", status)
	if d.Revision > 0 {
		line("Revision:", fmt.Sprint(d.Revision))
	}
	if t := d.Target; t != nil {
		how := "partial: only these and what they depend on"
		if t.Dependents {
			how = "partial: only these, what depends on them and what they depend on"
		}
		line("Target:", strings.Join(t.Targets, ", ")+" ("+how+")")
	}
	line("Started:", d.Started.Local().Format(time.DateTime))
	if !d.Running() {
		line("Ended:", d.Closed.Local().Format(time.DateTime))
	}
	line("Duration:", formatDuration(d.Duration(now)))
	if d.Changes != nil {
		line("Plan:", fmt.Sprintf("%s (%d to create, %d to update, %d to delete, %d unchanged)",
			d.Changes, d.Changes.Create, d.Changes.Update, d.Changes.Delete, d.Changes.Unchanged))
	}
	if p := d.People; p != nil {
		for _, l := range peopleLines(*p) {
			line(l[0], l[1])
		}
	}
	line("Error:", d.Error)
	if len(d.Policies) > 0 {
		line("Policies:", fmt.Sprintf("%d violations (listed below)", len(d.Policies)))
	}
	if comp := d.Compensation; comp != nil {
		line("Compensation:", fmt.Sprintf("%d resources put back, %d could not be", len(comp.Resources), len(comp.Errors)))
	}
	line("Web UI:", d.URL)
	line("Page:", d.Page)
	line("Workflow:", d.WorkflowID)
	tw.Flush()
	if len(d.Policies) > 0 {
		fmt.Fprintln(w)
		printPolicies(w, d.Policies)
	}
	if d.ProgressError != "" {
		fmt.Fprintf(w, "\nResources: %s\n", d.ProgressError)
		return
	}
	if len(d.Resources) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tACTION\tRESULT\tDURATION\tERROR")
	for _, r := range d.Resources {
		duration := "-"
		switch {
		case r.Started.IsZero(): // no apply or delete (or a run older than these times)
		case r.Result == runspec.NodeRunning:
			duration = formatDuration(now.Sub(r.Started)) + " so far"
		default:
			duration = formatDuration(r.Duration)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, orDash(string(r.Action)), r.Result, duration, oneLine(r.Error))
	}
	tw.Flush()
}

// oneLine keeps a multi-line error in its table cell.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func runWait(c *cli.Context) error {
	return withRunClient(c, func(kc *client.Client, project, runID string) error {
		ctx := c.Context
		if t := c.Duration("timeout"); t > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, t)
			defer cancel()
		}
		run, info, err := kc.OpenRun(ctx, project, runID)
		if err != nil {
			return timedOut(ctx, c.Duration("timeout"), runID, err)
		}
		if !info.Running() {
			return ended(ctx, run, info)
		}
		fmt.Printf("Waiting for %s run %s of %s/%s (%s).\n", info.Operation, run.RunID, info.Project, info.Workspace, info.Status)
		return timedOut(ctx, c.Duration("timeout"), runID, follow(ctx, run, false))
	})
}

// timedOut turns the error of a wait whose --timeout passed into exit code 3.
func timedOut(ctx context.Context, timeout time.Duration, runID string, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &exitError{code: exitTimeout, err: fmt.Errorf("run %s did not end within %s; it goes on", runID, timeout)}
	}
	return err
}

// ended reports a run that had ended before `run wait` looked, with the exit
// code of its outcome.
func ended(ctx context.Context, run *client.Run, info *client.RunInfo) error {
	res, err := run.Wait(ctx)
	fmt.Printf("Run %s (%s", run.RunID, info.Operation)
	if info.Revision > 0 {
		fmt.Printf(", revision %d", info.Revision)
	}
	fmt.Printf(") ended %s at %s after %s.\n", info.Status, info.Closed.Local().Format(time.DateTime), formatDuration(info.Duration(time.Now())))
	if err == nil {
		return nil
	}
	code := exitFailed
	if info.Status == string(runspec.StatusCancelled) || res.Status == runspec.StatusCancelled {
		code = exitCancelled
	}
	return &exitError{code: code, err: err}
}

func runCancel(c *cli.Context) error {
	return withRunClient(c, func(kc *client.Client, project, runID string) error {
		reason := c.String("reason")
		if reason == "" {
			reason = "by `kumo run cancel`"
			if u, err := user.Current(); err == nil {
				reason = fmt.Sprintf("by %s with `kumo run cancel`", u.Username)
			}
		}
		run, err := kc.CancelRun(c.Context, project, runID, reason)
		if err != nil {
			return err
		}
		if run.Queued != nil {
			fmt.Printf("Removed queued %s run %s from the run queue of %s/%s: it will not run.\n", run.Operation, run.RunID, run.Queued.Project, run.Queued.Workspace)
			return nil
		}
		fmt.Printf("Cancelling %s run %s: no resource starts any more; the ones in flight finish.\n", run.Operation, run.RunID)
		if c.Bool("no-wait") {
			return nil
		}
		err = follow(c.Context, run, false)
		var ee *exitError
		switch {
		case errors.As(err, &ee) && ee.code == exitCancelled:
			return nil // what was asked for
		case err == nil:
			return fmt.Errorf("run %s ended succeeded before the cancel took effect", run.RunID)
		}
		return err
	})
}

// peopleLines are the rows of `run show` that say who started, approved,
// rejected or cancelled a run, and when.
func peopleLines(p engine.People) [][2]string {
	var rows [][2]string
	add := func(k string, a *engine.Actor) {
		if a == nil {
			return
		}
		v := a.String()
		if !a.Time.IsZero() {
			v += " at " + a.Time.Local().Format(time.DateTime)
		}
		if a.Reason != "" {
			v += ": " + oneLine(a.Reason)
		}
		rows = append(rows, [2]string{k, v})
	}
	add("Started by:", p.StartedBy)
	for i := range p.Approvals {
		add("Approved by:", &p.Approvals[i])
	}
	add("Rejected by:", p.RejectedBy)
	add("Cancelled by:", p.CancelledBy)
	return rows
}
