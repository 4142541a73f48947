package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/runspec"
)

func driftScheduleCommand() *cli.Command {
	output := outputFlag(formatTable, formatJSON)
	timing := []cli.Flag{
		&cli.DurationFlag{Name: "every", Usage: "interval between checks (at least 1m; default 4h)"},
		&cli.StringFlag{Name: "cron", Usage: "cron expression instead of --every (\"0 */6 * * *\", @daily)"},
		&cli.DurationFlag{Name: "jitter", Usage: "delay each check by a random time up to this"},
	}
	change := func(name, usage string, action client.DriftScheduleAction, flags ...cli.Flag) *cli.Command {
		return &cli.Command{Name: name, Usage: usage, Flags: flags, Action: func(c *cli.Context) error {
			return withClient(c, func(kc *client.Client, t target) error {
				if err := kc.ChangeDriftSchedule(c.Context, t.Project, t.Workspace, action, c.String("note")); err != nil {
					return err
				}
				fmt.Printf("drift schedule %s: %s\n", runspec.DriftScheduleID(t.Project, t.Workspace), action)
				return nil
			})
		}}
	}
	note := &cli.StringFlag{Name: "note", Usage: "why (shown by describe)"}
	return &cli.Command{
		Name: "schedule",
		Usage: "check the stack on a Temporal Schedule (ID kumo-drift/<project>/<workspace>); " +
			"needs `kumo server` or --temporal-address: a one-shot kumo's server stops with the command",
		Subcommands: []*cli.Command{
			{
				Name:   "create",
				Usage:  "create the stack's drift schedule (an error if it exists, unless --update)",
				Flags:  append(append(append([]cli.Flag{}, timing...), checkFlags()...), output, &cli.BoolFlag{Name: "update", Usage: "update the schedule if it exists"}),
				Action: scheduleCreate,
			},
			{
				Name:   "update",
				Usage:  "change the schedule's timing and mode, and take the workspace's current settings and drift rules",
				Flags:  append(append(append([]cli.Flag{}, timing...), checkFlags()...), output),
				Action: scheduleCreate,
			},
			{
				Name:  "list",
				Usage: "list the drift schedules (of --project, when given)",
				Flags: []cli.Flag{output, &cli.BoolFlag{Name: "all-projects", Usage: "every project's schedules"}},
				Action: func(c *cli.Context) error {
					return withClient(c, func(kc *client.Client, t target) error {
						project := t.Project
						if c.Bool("all-projects") {
							project = ""
						}
						list, err := kc.ListDriftSchedules(c.Context, project)
						if err != nil {
							return err
						}
						return printOutput(c, list, func() error {
							writeSchedules(os.Stdout, list)
							return nil
						})
					})
				},
			},
			{
				Name:  "describe",
				Usage: "the schedule: timing, mode, paused, recent and next checks, the last report",
				Flags: []cli.Flag{output},
				Action: func(c *cli.Context) error {
					return withClient(c, func(kc *client.Client, t target) error {
						s, err := kc.DescribeDriftSchedule(c.Context, t.Project, t.Workspace)
						if err != nil {
							return err
						}
						return printSchedule(c, s)
					})
				},
			},
			change("pause", "stop starting checks", client.SchedulePause, note),
			change("unpause", "start checks again", client.ScheduleUnpause, note),
			change("delete", "delete the schedule (its reports stay)", client.ScheduleDelete),
			{
				Name:  "trigger",
				Usage: "start a check now (none if one is running) and print its report, exiting as drift check does",
				Flags: []cli.Flag{output, &cli.BoolFlag{Name: "detach", Usage: "print the check's ID and exit without waiting"}},
				Action: func(c *cli.Context) error {
					return withClient(c, func(kc *client.Client, t target) error {
						run, err := kc.TriggerDriftCheck(c.Context, t.Project, t.Workspace)
						if err != nil {
							return err
						}
						fmt.Fprintf(os.Stderr, "drift check %s started\n", run.WorkflowID)
						if c.Bool("detach") {
							return nil
						}
						r, err := kc.WaitDriftCheck(c.Context, run, t.Project, t.Workspace)
						if err != nil {
							return err
						}
						return reportExit(c, r)
					})
				},
			},
		},
	}
}

func scheduleCreate(c *cli.Context) error {
	return withClient(c, func(kc *client.Client, t target) error {
		dr, err := driftRequest(c, kc, t)
		if err != nil {
			return err
		}
		req := client.ScheduleRequest{DriftRequest: dr, Every: c.Duration("every"), Cron: c.String("cron"), Jitter: c.Duration("jitter")}
		var s *client.DriftSchedule
		var exists *client.ScheduleExistsError
		if c.Command.Name == "update" {
			s, err = kc.UpdateDriftSchedule(c.Context, req)
		} else if s, err = kc.CreateDriftSchedule(c.Context, req); errors.As(err, &exists) && c.Bool("update") {
			s, err = kc.UpdateDriftSchedule(c.Context, req)
		}
		if err != nil {
			return err
		}
		return printSchedule(c, s)
	})
}

func printSchedule(c *cli.Context, s *client.DriftSchedule) error {
	return printOutput(c, s, func() error {
		writeSchedule(os.Stdout, s)
		return nil
	})
}

// writeSchedule prints one schedule for people.
func writeSchedule(w io.Writer, s *client.DriftSchedule) {
	fmt.Fprintf(w, "schedule  %s\n", s.ID)
	fmt.Fprintf(w, "stack     %s/%s %s\n", s.Project, s.Workspace, s.Stack)
	fmt.Fprintf(w, "when      %s\n", timing(s))
	fmt.Fprintf(w, "mode      %s\n", s.Mode)
	state := "active"
	if s.Paused {
		state = "paused"
	}
	if s.Note != "" {
		state += " (" + s.Note + ")"
	}
	fmt.Fprintf(w, "state     %s\n", state)
	if s.Running != "" {
		fmt.Fprintf(w, "running   %s\n", s.Running)
	}
	for _, r := range s.Recent {
		fmt.Fprintf(w, "ran       %s  %s\n", r.Started.Local().Format(time.DateTime), r.WorkflowID)
	}
	if len(s.Next) > 0 && !s.Paused {
		fmt.Fprintf(w, "next      %s\n", s.Next[0].Local().Format(time.DateTime))
	}
	if s.Skipped > 0 {
		fmt.Fprintf(w, "skipped   %d (a check was still running)\n", s.Skipped)
	}
	if s.LastReport != nil {
		fmt.Fprintf(w, "last      %s\n", s.LastReport.Summary())
	}
}

func writeSchedules(w io.Writer, list []*client.DriftSchedule) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no drift schedules")
		return
	}
	fmt.Fprintf(w, "%-40s %-18s %-10s %-8s %s\n", "SCHEDULE", "WHEN", "MODE", "STATE", "NEXT")
	for _, s := range list {
		state, next := "active", ""
		if s.Paused {
			state = "paused"
		} else if len(s.Next) > 0 {
			next = s.Next[0].Local().Format(time.DateTime)
		}
		fmt.Fprintf(w, "%-40s %-18s %-10s %-8s %s\n", s.ID, timing(s), s.Mode, state, next)
	}
}

func timing(s *client.DriftSchedule) string {
	var parts []string
	if s.Every != "" {
		parts = append(parts, "every "+s.Every)
	}
	if s.Cron != "" {
		parts = append(parts, "cron "+s.Cron)
	}
	if s.Jitter != "" {
		parts = append(parts, "jitter "+s.Jitter)
	}
	return strings.Join(parts, ", ")
}
