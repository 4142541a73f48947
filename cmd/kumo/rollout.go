package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine/rollout"
	"github.com/kumoproj/kumo/runspec"
)

func rolloutCommand() *cli.Command {
	return &cli.Command{
		Name:  "rollout",
		Usage: "apply one stack to many workspaces in waves, stopping (and undoing) on failure",
		Subcommands: []*cli.Command{
			rolloutCreateCommand(),
			rolloutStatusCommand(),
			rolloutControlCommand(runspec.RolloutPause, "stop starting applies (those running finish); resume goes on"),
			rolloutControlCommand(runspec.RolloutResume, "go on after a pause"),
			rolloutControlCommand(runspec.RolloutAbort, "stop the rollout for good: no further apply starts, those running finish"),
			rolloutControlCommand(runspec.RolloutApprove, "approve the wave awaiting approval"),
		},
	}
}

func rolloutCreateCommand() *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "start a rollout of the stack across workspaces, wave after wave",
		ArgsUsage: "NAME",
		Flags: append([]cli.Flag{
			stackFlag(), generatorTimeoutFlag(),
			&cli.StringFlag{Name: "source", Usage: "apply the stack of git source `NAME` (kumo source add) instead of --stack: every workspace gets the commit its ref is at when the rollout starts"},
			&cli.StringFlag{Name: "commit", Usage: "with --source: deploy this commit ID instead of the ref's"},
			&cli.StringFlag{Name: "waves", Usage: `ordered waves "NAME=PATTERN[,PATTERN]; ...", e.g. "canary=dev-eu1; 25%=prod-eu*; rest=prod-*" (see README, Roll out across clusters)`},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "a rollout.yaml instead of --waves"},
			&cli.IntFlag{Name: "max-parallel", Usage: "at most this many workspaces of a wave apply at once (default: the whole wave)"},
			&cli.StringFlag{Name: "bake", Usage: "how long a wave's workspaces must stay healthy before the next wave starts (e.g. 10m)"},
			&cli.StringFlag{Name: "failure-threshold", Usage: "failures a wave tolerates: a count (1) or a percentage (10%) of its workspaces (default 0)"},
			&cli.StringFlag{Name: "approve-waves", Usage: "comma-separated waves that start only once approved (kumo rollout approve)"},
			&cli.BoolFlag{Name: "undo-on-failure", Usage: "when a wave fails, roll every workspace the rollout changed back to its previous revision, newest first"},
			parallelismFlag(), yesFlag(), detachFlag(), waitFlag(), timeoutFlag(),
		}, approvalFlags()...),
		Action: func(c *cli.Context) error {
			spec, err := rolloutSpec(c)
			if err != nil {
				return err
			}
			var dir, project string
			if spec.Source != "" {
				project = global(c, "project") // else the source's
			} else {
				if dir, err = stackDir(c); err != nil {
					return err
				}
				if project, err = projectName(c); err != nil {
					return err
				}
			}
			kc, err := open(c)
			if err != nil {
				return err
			}
			defer kc.CloseBeforeExit()
			if c.Bool("detach") {
				kc.RequireServer()
			}
			var one client.Request
			if err := setApproval(c, &one); err != nil {
				return err
			}
			if err := setWait(c, &one); err != nil {
				return err
			}
			ro, plan, err := kc.StartRollout(c.Context, client.RolloutRequest{
				Project: project, StackDir: dir, GitSource: spec.Source, GitCommit: spec.Commit, Spec: spec, GeneratorTimeout: c.Duration("generator-timeout"),
				Parallelism: c.Int("parallelism"), AutoApprove: one.AutoApprove, ApprovalTimeout: one.ApprovalTimeout,
				Wait: one.Wait, Timeout: one.Timeout,
			})
			if err != nil {
				return err
			}
			fmt.Printf("Started rollout %s of %s: %d waves, %d workspaces (workflow %s).\n", ro.Name, ro.Project, len(plan.Waves), len(plan.Workspaces()), ro.WorkflowID)
			if g := ro.Git; g != nil {
				fmt.Printf("Every apply deploys commit %s of source %s (%s@%s).\n", g.Commit, g.Source, g.URL, g.Ref)
			}
			if c.Bool("detach") {
				if srv := kc.Server(); srv != nil {
					if u := srv.RunURL(ro.WorkflowID, ro.RunID); u != "" {
						fmt.Printf("Web UI: %s\n", u)
					}
				}
				fmt.Printf("kumo rollout status %s shows it; pause, resume, abort and approve act on it.\n", ro.Name)
				return nil
			}
			return followRollout(c.Context, ro)
		},
	}
}

// rolloutSpec is the rollout the flags describe: --waves or -f, the name
// argument, and the wave defaults.
func rolloutSpec(c *cli.Context) (rollout.Spec, error) {
	var spec rollout.Spec
	args, err := positionalArgs(c)
	if err != nil {
		return spec, err
	}
	if len(args) > 1 {
		return spec, fmt.Errorf("rollout create takes one NAME, not %d arguments: %s", len(args), strings.Join(args, " "))
	}
	name := ""
	if len(args) == 1 {
		name = args[0]
	}
	switch {
	case c.IsSet("waves") && c.IsSet("file"):
		return spec, errors.New("give --waves or -f rollout.yaml, not both")
	case c.IsSet("file"):
		if spec, err = rollout.ReadFile(c.String("file")); err != nil {
			return spec, err
		}
		if name != "" && spec.Name != "" && name != spec.Name {
			return spec, fmt.Errorf("rollout create %s: %s names the rollout %q", name, c.String("file"), spec.Name)
		}
		if spec.Name == "" {
			spec.Name = name
		}
	case c.IsSet("waves"):
		var waves []rollout.WaveSpec
		waves, err = rollout.ParseWaves(c.String("waves"))
		if err != nil {
			return spec, err
		}
		spec.Name, spec.Waves = name, waves
	default:
		return spec, errors.New("rollout create: give the waves with --waves \"canary=dev-eu1; rest=prod-*\" or -f rollout.yaml")
	}
	if spec.Name == "" {
		return spec, errors.New("rollout create: name the rollout (kumo rollout create NAME ...)")
	}
	if c.Bool("undo-on-failure") {
		spec.UndoOnFailure = true
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"source", &spec.Source}, {"commit", &spec.Commit}} {
		if v := c.String(f.name); v != "" {
			if *f.dst != "" && *f.dst != v {
				return spec, fmt.Errorf("--%s %s: %s says %s: %s", f.name, v, c.String("file"), f.name, *f.dst)
			}
			*f.dst = v
		}
	}
	switch {
	case spec.Commit != "" && spec.Source == "":
		return spec, errors.New("--commit (commit:) pins the commit of a git source: give --source NAME (source:) too")
	case spec.Source != "" && c.IsSet("stack"):
		return spec, errors.New("give --stack DIR or a git source (--source, source:), not both")
	}
	if c.IsSet("max-parallel") {
		spec.Defaults.MaxParallel = c.Int("max-parallel")
	}
	if c.IsSet("bake") {
		spec.Defaults.Bake = c.String("bake")
	}
	if c.IsSet("failure-threshold") {
		spec.Defaults.FailureThreshold = c.String("failure-threshold")
	}
	yes := true
	for _, w := range strings.Split(c.String("approve-waves"), ",") {
		if w = strings.TrimSpace(w); w == "" {
			continue
		}
		found := false
		for i := range spec.Waves {
			if spec.Waves[i].Name == w {
				spec.Waves[i].Approval, found = &yes, true
			}
		}
		if !found {
			return spec, fmt.Errorf("--approve-waves: no wave is named %q", w)
		}
	}
	return spec, nil
}

// followRollout prints the rollout's status whenever it changes, until it
// ends.
func followRollout(ctx context.Context, ro *client.Rollout) error {
	done := make(chan struct{})
	var st runspec.RolloutStatus
	var werr error
	go func() {
		defer close(done)
		st, werr = ro.Wait(ctx)
	}()
	last := ""
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			printRollout(os.Stdout, st)
			return werr
		case <-tick.C:
			cur, err := ro.Status(ctx)
			if err != nil {
				continue
			}
			if line := rolloutLine(cur); line != last {
				fmt.Println(line)
				last = line
			}
		}
	}
}

// rolloutLine is one line saying where the rollout is.
func rolloutLine(st runspec.RolloutStatus) string {
	if st.Wave >= len(st.Waves) {
		return string(st.State)
	}
	w := st.Waves[st.Wave]
	var parts []string
	for _, s := range w.Workspaces {
		parts = append(parts, s.Workspace+" "+string(s.State))
	}
	return fmt.Sprintf("%s: wave %d/%d %s %s (%s)", st.State, st.Wave+1, len(st.Waves), w.Name, w.State, strings.Join(parts, ", "))
}

// printRollout prints waves × workspaces with state and revision.
func printRollout(out io.Writer, st runspec.RolloutStatus) {
	fmt.Fprintf(out, "Rollout %s of %s (stack %s): %s\n", st.Name, st.Project, st.Stack, st.State)
	if g := st.Git; g != nil {
		fmt.Fprintf(out, "  from source %s: %s@%s, commit %s, path %q\n", g.Source, g.URL, g.Ref, g.Commit, g.Path)
	}
	if st.Message != "" {
		fmt.Fprintf(out, "  %s\n", st.Message)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WAVE\tWAVE STATE\tWORKSPACE\tSTATE\tPRIOR\tREVISION\tUNDO\tNOTE")
	for _, w := range st.Waves {
		for k, s := range w.Workspaces {
			name, state := "", ""
			if k == 0 {
				name, state = w.Name, string(w.State)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, state, s.Workspace, s.State, rev(s.Prior), rev(s.Revision), rev(s.UndoRevision), s.Error)
		}
	}
	_ = tw.Flush()
	for _, a := range st.Actions {
		line := fmt.Sprintf("  %s by %s at %s", a.Action, a.By, a.By.Time.Format(time.RFC3339))
		if a.Wave != "" {
			line += " (wave " + a.Wave + ")"
		}
		if a.By.Reason != "" {
			line += ": " + a.By.Reason
		}
		fmt.Fprintln(out, line)
	}
}

func rev(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func rolloutStatusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show a rollout's waves and workspaces, with state and revision",
		ArgsUsage: "NAME",
		Flags:     []cli.Flag{outputFlag("table", "json")},
		Action: func(c *cli.Context) error {
			return withRollout(c, func(ro *client.Rollout) error {
				st, err := ro.Status(c.Context)
				if err != nil {
					return err
				}
				if c.String("output") == "json" {
					return printJSON(st)
				}
				printRollout(os.Stdout, st)
				return nil
			})
		},
	}
}

func rolloutControlCommand(action, usage string) *cli.Command {
	return &cli.Command{
		Name:      action,
		Usage:     usage,
		ArgsUsage: "NAME",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why, recorded in the rollout's status"}},
		Action: func(c *cli.Context) error {
			return withRollout(c, func(ro *client.Rollout) error {
				st, err := ro.Control(c.Context, action, c.String("reason"))
				if err != nil {
					return fmt.Errorf("%s rollout %s: %w", action, ro.Name, err)
				}
				fmt.Printf("Rollout %s: %s sent; it is %s.\n", ro.Name, action, st.State)
				return nil
			})
		},
	}
}

func withRollout(c *cli.Context, fn func(*client.Rollout) error) error {
	args, err := positionalArgs(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return fmt.Errorf("kumo rollout %s takes the rollout's NAME", c.Command.Name)
	}
	return withProject(c, func(kc *client.Client, project string) error {
		ro, err := kc.RolloutOf(c.Context, project, args[0])
		if err != nil {
			return err
		}
		return fn(ro)
	})
}
