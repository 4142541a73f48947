package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/internal/gitrev"
	"github.com/kumoproj/kumo/runspec"
)

// sourceFlags choose what a preview or apply works on: a ready spec, or a stack
// to generate one from.
func sourceFlags() []cli.Flag {
	return append(fileFlags(), stackFlag(), generatorTimeoutFlag())
}

func stackFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "stack", Usage: "stack directory (stack.yaml, app.yaml) to generate from (default: the current directory)"}
}

func generatorTimeoutFlag() *cli.DurationFlag {
	return &cli.DurationFlag{Name: "generator-timeout", Value: generate.DefaultGeneratorTimeout, Usage: "how long one external generator call may take"}
}

// setSource fills req with the spec file, or else the stack to generate from.
func setSource(c *cli.Context, req *client.Request) error {
	if name := c.String("source"); name != "" {
		if inputGiven(c) || c.IsSet("stack") {
			return errors.New("give either --source or --stack/--spec-file/--kustomize/--chart, not both")
		}
		req.GitSource, req.GitCommit, req.GeneratorTimeout = name, c.String("commit"), c.Duration("generator-timeout")
		return nil
	}
	if c.IsSet("commit") && (inputGiven(c) || c.IsSet("stack")) {
		return errors.New("--commit pins the commit of a git source: give it with --source NAME (or alone, for the workspace's default source)")
	}
	if inputGiven(c) {
		if c.IsSet("stack") {
			return errors.New("give either --spec-file/--kustomize/--chart or --stack, not both")
		}
		var err error
		req.Spec, req.Chart, err = readSpecArg(c, req.Settings)
		return err
	}
	if err := onlyWithChart(c); err != nil {
		return err
	}
	if ns := global(c, "namespace"); ns != "" {
		return fmt.Errorf("-n/--namespace %s sets the namespace of plain Kubernetes manifests given with -f, not of a stack; for the Temporal namespace use --temporal-namespace %s", ns, ns)
	}
	dir, err := stackDir(c)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, generate.StackFile)); errors.Is(err, os.ErrNotExist) && !c.IsSet("stack") {
		if hasFlag(c, "source") {
			req.GeneratorTimeout = c.Duration("generator-timeout")
			return nil // the workspace's default source (sourceProject)
		}
		return fmt.Errorf("nothing to %s: %s is not a stack directory (no %s); run kumo in a stack directory, or pass --stack DIR or --spec-file FILE",
			c.Command.Name, dir, generate.StackFile)
	}
	if c.IsSet("commit") {
		return fmt.Errorf("--commit pins the commit of a git source, but %s is a stack directory: give --source NAME (or run outside it for the workspace's default source)", dir)
	}
	// The client reads the stack (and reports a bad file) before starting the run.
	req.StackDir, req.GeneratorTimeout = dir, c.Duration("generator-timeout")
	return nil
}

func parallelismFlag() *cli.IntFlag {
	return &cli.IntFlag{Name: "parallelism", Value: 10, Usage: "how many resources to change at once"}
}

// forceConflictsFlag is kubectl's flag: take over fields other field managers own
// on objects kumo has not recorded yet, instead of failing.
func forceConflictsFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "force-conflicts", Usage: "take over the fields other Kubernetes field managers own on objects kumo did not create (default: fail naming them)"}
}

// targetFlags narrow a preview, apply or destroy to some resources, as
// Terraform's -target does.
func targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "target", Usage: "only this resource and what it depends on (repeatable): an ID (apps/v1:Deployment:demo:web), kind/name (Deployment/web) or a glob (apps/v1:Deployment:demo:*); the release records that it is partial"},
		&cli.BoolFlag{Name: "target-dependents", Usage: "with --target: also what depends on the targets"},
	}
}

// allowProtectedFlag lets an admin delete resources whose delete policy is
// protect; the run checks the role, not the CLI.
func allowProtectedFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "allow-protected-delete", Usage: "delete resources annotated kumoproj.io/delete-policy: protect (admins only; checked by the server)"}
}

// setTargets copies the target and protection flags the command has.
func setTargets(c *cli.Context, req *client.Request) {
	req.Targets, req.TargetDependents = c.StringSlice("target"), c.Bool("target-dependents")
	req.AllowProtectedDelete = c.Bool("allow-protected-delete")
}

func queueFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "queue", Usage: "while another run holds the stack, wait in its run queue (first come, first served) instead of failing; " +
		"the plan is made when the run starts (default: the workspace's runs.queue)"}
}

// setQueue puts the run in the stack's queue when --queue says so, or,
// without the flag, when the workspace's runs.queue does.
func setQueue(c *cli.Context, kc *client.Client, req *client.Request) error {
	if c.IsSet("queue") {
		req.Queue = c.Bool("queue")
		return nil
	}
	ws, err := kc.Workspace(c.Context, req.Workspace)
	if err != nil {
		return err
	}
	req.Queue = ws.Runs.Queue
	return nil
}

// startedOrQueued follows a run, or, for a queued one, says where it waits
// and (unless --detach) waits for it to start and follows it then.
func startedOrQueued(ctx context.Context, c *cli.Context, kc *client.Client, run *client.Run, interactive bool) error {
	if run.Queued == nil {
		return followOrDetach(ctx, c, kc, run, interactive)
	}
	q := run.Queued
	fmt.Printf("Queued %s run %s on %s/%s at position %d. `kumo run list` shows the queue; `kumo run cancel %s` takes it out.\n",
		run.Operation, q.ID, q.Project, q.Workspace, q.Position, q.ID)
	if c.Bool("detach") {
		fmt.Println("It starts, as you, when the runs before it have ended; its plan is made then.")
		return nil
	}
	started, err := q.Started(ctx, func(r runspec.QueuedRun) {
		if r.Position > 0 && r.Position != q.Position {
			fmt.Printf("Now at position %d.\n", r.Position)
		}
	})
	if err != nil {
		return err
	}
	fmt.Printf("Its turn: %s run %s started.\n", started.Operation, started.RunID)
	return followOrDetach(ctx, c, kc, started, interactive)
}

func yesFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "apply without asking for confirmation"}
}

func previewCommand() *cli.Command {
	return &cli.Command{
		Name:  "preview",
		Usage: "show what apply would change, resource by resource and field by field",
		Flags: append(append(append(sourceFlags(), gitSourceFlags()...), parallelismFlag(), forceConflictsFlag(), outputFlag(formatTable, formatJSON)), targetFlags()...),
		Action: func(c *cli.Context) error {
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				if err := setSource(c, &req); err != nil {
					return err
				}
				setTargets(c, &req)
				if err := sourceProject(c, kc, &req); err != nil {
					return err
				}
				run, err := kc.Preview(ctx, req)
				if err != nil {
					return err
				}
				res, err := run.Wait(ctx)
				if err != nil {
					return runFailed(ctx, run, err)
				}
				if res.ChangesOmitted > 0 { // too many for the result: the run answers them in pages
					p, err := run.Progress(ctx)
					if err != nil {
						return fmt.Errorf("the preview's %d changes: %w", res.ChangesOmitted, err)
					}
					res.Changes = p.Changes
				}
				return printOutput(c, map[string]any{"changes": res.Changes, "digest": res.Digest, "policies": res.Policies}, func() error {
					printChanges(os.Stdout, res.Changes)
					printPolicies(os.Stdout, res.Policies)
					printDigest(os.Stdout, res.Digest)
					return nil
				})
			})
		},
	}
}

func applyCommand() *cli.Command {
	return &cli.Command{
		Name:  "apply",
		Usage: "generate (or read) the spec, preview, confirm, and apply it in dependency order; records a release",
		Flags: append(append(append(sourceFlags(), gitSourceFlags()...), parallelismFlag(), yesFlag(), detachFlag(), forceConflictsFlag(),
			&cli.BoolFlag{Name: "rollback-on-failure", Usage: "if a resource fails, undo what this apply changed, in reverse order"},
			waitFlag(), timeoutFlag(), queueFlag(),
			&cli.StringFlag{Name: "version", Usage: "name the release (alpha1, v1.2.0), unique in the stack: release list shows it, rollback --version restores it"},
			messageFlag(), allowProtectedFlag()), append(approvalFlags(), targetFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.String("spec-file") == "-" && !c.Bool("yes") && c.String("approval") != "auto" {
				return errors.New("kumo apply -f - reads standard input, so it cannot ask for confirmation there too: add --yes (or preview first)")
			}
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				if err := setSource(c, &req); err != nil {
					return err
				}
				if err := sourceProject(c, kc, &req); err != nil {
					return err
				}
				if err := setApproval(c, &req); err != nil {
					return err
				}
				req.RollbackOnFailure = c.Bool("rollback-on-failure")
				setTargets(c, &req)
				if err := setWait(c, &req); err != nil {
					return err
				}
				req.Label.Version, req.Label.Message = c.String("version"), c.String("message")
				req.Label.SourceCommit = sourceCommit(c.String("spec-file"))
				if err := setQueue(c, kc, &req); err != nil {
					return err
				}
				run, err := kc.Apply(ctx, req)
				if err != nil {
					return err
				}
				return startedOrQueued(ctx, c, kc, run, !req.AutoApprove)
			})
		},
	}
}

func destroyCommand() *cli.Command {
	return &cli.Command{
		Name:  "destroy",
		Usage: "delete everything the latest release recorded, dependents first",
		Flags: append([]cli.Flag{parallelismFlag(), yesFlag(), detachFlag(), allowProtectedFlag(), queueFlag()}, append(approvalFlags(), targetFlags()...)...),
		Action: func(c *cli.Context) error {
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				if err := setApproval(c, &req); err != nil {
					return err
				}
				setTargets(c, &req)
				if err := setQueue(c, kc, &req); err != nil {
					return err
				}
				run, err := kc.Destroy(ctx, req)
				if err != nil {
					return err
				}
				return startedOrQueued(ctx, c, kc, run, !req.AutoApprove)
			})
		},
	}
}

func refreshCommand() *cli.Command {
	return &cli.Command{
		Name:  "refresh",
		Usage: "record what is live as a new revision of the latest release's spec, changing nothing live; lists what differed",
		Flags: append([]cli.Flag{parallelismFlag(), yesFlag(), detachFlag(), messageFlag()}, approvalFlags()...),
		Action: func(c *cli.Context) error {
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				if err := setApproval(c, &req); err != nil {
					return err
				}
				req.Label.Message = c.String("message")
				run, err := kc.Refresh(ctx, req)
				if err != nil {
					return err
				}
				return followOrDetach(ctx, c, kc, run, !req.AutoApprove)
			})
		},
	}
}

func rollbackCommand() *cli.Command {
	return &cli.Command{
		Name:  "rollback",
		Usage: "apply an earlier revision's spec again, as a new revision",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "revision", Usage: "revision to restore (default: the last succeeded one before the latest)"},
			&cli.StringFlag{Name: "version", Usage: "restore the revision an apply named so (apply --version), instead of --revision"},
			messageFlag(),
			&cli.BoolFlag{Name: "allow-failed", Usage: "allow restoring a revision whose apply failed"},
			parallelismFlag(), yesFlag(), detachFlag(), forceConflictsFlag(), waitFlag(), timeoutFlag(), allowProtectedFlag(), queueFlag(),
		}, approvalFlags()...),
		Action: func(c *cli.Context) error {
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				if err := setApproval(c, &req); err != nil {
					return err
				}
				if err := setWait(c, &req); err != nil {
					return err
				}
				revision := c.Int("revision")
				if v := c.String("version"); v != "" {
					if c.IsSet("revision") {
						return errors.New("rollback: give --revision or --version, not both")
					}
					var err error
					if revision, err = kc.RevisionOfVersion(ctx, req.Project, req.Workspace, v); err != nil {
						return err
					}
				}
				req.Label.Message = c.String("message")
				req.AllowProtectedDelete = c.Bool("allow-protected-delete")
				if err := setQueue(c, kc, &req); err != nil {
					return err
				}
				run, err := kc.Rollback(ctx, req, revision, c.Bool("allow-failed"))
				if err != nil {
					return err
				}
				return startedOrQueued(ctx, c, kc, run, !req.AutoApprove)
			})
		},
	}
}

func resumeCommand() *cli.Command {
	return &cli.Command{
		Name:  "resume",
		Usage: "follow the unfinished apply or destroy of the project+workspace to its end",
		Action: func(c *cli.Context) error {
			return withRun(c, func(ctx context.Context, kc *client.Client, req client.Request) error {
				run, err := kc.Unfinished(ctx, req.Project, req.Workspace)
				if err != nil {
					return err
				}
				if run == nil {
					fmt.Printf("Nothing to resume: %s/%s has no unfinished run.\n", req.Project, req.Workspace)
					return nil
				}
				fmt.Printf("Resuming %s run %s of %s/%s.\n", run.Operation, run.RunID, req.Project, req.Workspace)
				return follow(ctx, run, true)
			})
		},
	}
}

// withRun builds the request from the flags, opens a client and closes it (and
// the embedded server) when the command ends. A detached run needs a Temporal
// that outlives the command: a kumo server or --temporal-address.
func withRun(c *cli.Context, fn func(context.Context, *client.Client, client.Request) error) error {
	return withClient(c, func(kc *client.Client, t target) error {
		if c.Bool("detach") {
			kc.RequireServer()
		}
		s, err := kc.Settings(c.Context, t.Workspace, settings(c))
		if err != nil {
			return err
		}
		s.ForceConflicts = c.Bool("force-conflicts") // defined on preview, apply and rollback
		req := client.Request{Project: t.Project, Workspace: t.Workspace, Parallelism: c.Int("parallelism"), Settings: s}
		err = fn(c.Context, kc, req)
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		if errors.Is(c.Context.Err(), context.Canceled) && kc.Embedded() {
			fmt.Fprintln(os.Stderr, "Interrupted: the run is recorded and continues the next time kumo starts; `kumo resume` follows it.")
			return &exitError{code: 130, err: err}
		}
		if errors.Is(c.Context.Err(), context.Canceled) && kc.Server() != nil {
			fmt.Fprintln(os.Stderr, "Interrupted: the run goes on in kumo server; `kumo resume` follows it.")
			return &exitError{code: 130, err: err}
		}
		return err
	})
}

func messageFlag() cli.Flag {
	return &cli.StringFlag{Name: "message", Usage: "say what the release is, recorded on it (release show, the API)"}
}

// sourceCommit is the git commit of the checkout holding the spec or
// manifests given with -f ("" for standard input, or outside a checkout): it
// is recorded on the release, as a stack's is.
func sourceCommit(path string) string {
	if path == "" || path == "-" {
		return ""
	}
	dir := path
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		dir = filepath.Dir(path)
	}
	commit, _ := gitrev.Head(dir)
	return commit
}
