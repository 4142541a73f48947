package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

const pollInterval = 200 * time.Millisecond

// follow renders a run's preview and per-resource progress until it ends. When
// the run waits for approval, interactive asks for it; otherwise follow says
// where to answer and waits. Interrupted while the run waits, it leaves the run
// waiting. It fails when the release failed (exit code 2 when it was cancelled
// or not approved).
func follow(ctx context.Context, run *client.Run, interactive bool) error {
	start := time.Now()
	type outcome struct {
		res runspec.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := run.Wait(ctx)
		done <- outcome{res, err}
	}()

	shownPreview := false
	printed := map[string]runspec.NodeStatus{}
	healths := map[string]string{}
	waitingFor := "" // what the run last said it waits for (a worker on a queue)
	// ended: the run is over, so its preview is shown even though its stage
	// did not move on (a preview's policies are checked after its changes are).
	ended := false
	showProgress := func(p runspec.Progress) {
		if p.Waiting != waitingFor {
			if waitingFor = p.Waiting; waitingFor != "" {
				fmt.Fprintf(os.Stdout, "  %s\n", waitingFor)
			}
		}
		if !shownPreview && p.Changes != nil && (ended || p.Policies != nil || p.Stage != runspec.StagePreview) {
			printChanges(os.Stdout, p.Changes)
			printPolicies(os.Stdout, p.Policies)
			printDigest(os.Stdout, p.Digest)
			shownPreview = true
		}
		for _, n := range p.Nodes {
			if n.Status == runspec.NodeRunning && n.Health != "" && healths[n.ID] != n.Health {
				healths[n.ID] = n.Health
				fmt.Fprintf(os.Stdout, "  waiting  %s: %s\n", n.ID, n.Health)
			}
			if printed[n.ID] == n.Status {
				continue
			}
			printed[n.ID] = n.Status
			printNode(os.Stdout, n)
		}
	}
	finish := func(o outcome) error {
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		var nodes []runspec.Node
		ended = true
		// How each resource ended is in the result: asking the ended run
		// replays its whole history, seconds at 10,000 resources. Only a
		// preview not shown yet and too large for the result is asked for.
		p, known := endedProgress(o.res)
		if !known || !shownPreview && o.res.Changes == nil && o.res.ChangesOmitted > 0 {
			if q, err := run.Progress(qctx); err == nil {
				p, known = q, true
			}
		}
		if known {
			if p.Changes == nil {
				p.Changes = o.res.Changes
			}
			showProgress(p)
			nodes = p.Nodes
		} else if !shownPreview && o.res.Changes != nil {
			printChanges(os.Stdout, o.res.Changes)
			printPolicies(os.Stdout, o.res.Policies)
			printDigest(os.Stdout, o.res.Digest)
		}
		printSummary(os.Stdout, run, o.res, nodes, time.Since(start))
		if o.err == nil {
			return nil
		}
		return runEnded(ctx, run, endedAs(o.res), o.err)
	}
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	// The stage stays awaiting-approval until the workflow has taken the
	// answer: ask once. The answer goes to the run as `kumo approve` sends it.
	asked, waiting := false, false
	// seq is how far the run's progress has been seen: each poll asks only
	// for what changed after it.
	var seq uint64
	answers := make(chan error, 1)
	for {
		select {
		case o := <-done:
			if waiting && interactive {
				fmt.Println() // answered elsewhere: end the prompt's line
			}
			return finish(o)
		case <-ctx.Done():
			if waiting {
				fmt.Println()
				return stillWaiting(run)
			}
			return ctx.Err()
		case err := <-answers:
			// Answered elsewhere first, or the run ended meanwhile: how it
			// ends comes from done.
			if err != nil {
				fmt.Fprintf(os.Stderr, "Your answer was not taken: %v\n", err)
			}
		case <-ticker.C:
		}
		p, next, err := run.ProgressSince(ctx, seq, !shownPreview)
		if err != nil {
			continue // the first workflow task may not have run yet
		}
		seq = next
		showProgress(p)
		waiting = p.Stage == runspec.StageApproval
		if !waiting || asked {
			continue
		}
		asked = true
		printAwaiting(os.Stdout, run, p.Approval)
		if interactive {
			askApproval(ctx, run, answers)
		}
	}
}

// confirm asks a yes/no question; anything but yes, end of input included, is no.
// An answer that does not come from a terminal is echoed, so logs read right.
func confirm(in *os.File, out io.Writer, question string) bool {
	fmt.Fprint(out, question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	if st, err := in.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		fmt.Fprintln(out, a)
	}
	return a == "y" || a == "yes"
}

// endedAs is how a run that did not succeed ended, in the word `kumo run
// list` shows: a run cancelled, or whose plan was not approved (rejected, or
// declined at the prompt), is cancelled, not failed.
func endedAs(res runspec.Result) string {
	if res.Status == runspec.StatusCancelled {
		return string(runspec.StatusCancelled)
	}
	return "failed"
}

func printChanges(w io.Writer, changes []engine.Change) {
	counts := map[engine.Action]int{}
	for _, c := range changes {
		counts[c.Action]++
	}
	if len(changes) == 0 || counts[engine.UnChanged] == len(changes) {
		fmt.Fprintf(w, "No changes: %d resources up to date.\n", len(changes))
		for _, c := range changes {
			if note := waitNote(c); note != "" {
				fmt.Fprintf(w, "%-10s %s%s\n", "wait", c.ID, note)
			}
		}
		return
	}
	fmt.Fprintf(w, "%-10s %s\n", "ACTION", "RESOURCE")
	for _, c := range changes {
		fmt.Fprintf(w, "%-10s %s%s%s%s\n", c.Action, c.ID, takeoverNote(c), driftNote(c), waitNote(c))
		for _, f := range c.Fields {
			if f.Before == nil && f.After == nil { // a note, as "(N more fields change)"
				fmt.Fprintf(w, "           %s\n", f.Path)
				continue
			}
			fmt.Fprintf(w, "           %s: %s -> %s\n", f.Path, showValue(f.Before), showValue(f.After))
		}
	}
	if n, m := counts[engine.Forget], counts[engine.Move]; n+m > 0 {
		fmt.Fprintf(w, "Plan: %d to forget, %d to move; nothing live changes.\n", n, m)
		return
	}
	fmt.Fprintf(w, "Plan: %d to create, %d to update, %d to delete, %s%d unchanged.\n",
		counts[engine.Create], counts[engine.Update], counts[engine.Delete], adoptCount(counts), counts[engine.UnChanged])
}

// takeoverNote names who manages a live resource kumo takes over.
func takeoverNote(c engine.Change) string {
	if !c.TakesOver() {
		return ""
	}
	if len(c.TakingOverFrom) == 0 {
		return "  (taking over: not created by kumo)"
	}
	return "  (taking over from " + strings.Join(c.TakingOverFrom, ", ") + ")"
}

func adoptCount(counts map[engine.Action]int) string {
	if counts[engine.Adopt] == 0 {
		return ""
	}
	return fmt.Sprintf("%d to adopt, ", counts[engine.Adopt])
}

// waitNote says that an apply waits for an unchanged resource: it is not
// healthy live.
func waitNote(c engine.Change) string {
	if c.Wait == nil {
		return ""
	}
	return "  (not healthy, an apply waits for it: " + c.Wait.Health.String() + ")"
}

func driftNote(c engine.Change) string {
	if c.Drifted {
		return "  (changed outside kumo since the last release)"
	}
	return ""
}

func showValue(v any) string {
	if v == nil {
		return "(none)"
	}
	if s, ok := v.(string); ok {
		if s == engine.KnownAfterApply || engine.IsRef(s) {
			return engine.KnownAfterApply
		}
		if s == engine.Masked {
			return s
		}
		return fmt.Sprintf("%q", s)
	}
	switch v.(type) {
	case map[string]any, []any:
		// Maps and lists as JSON, as they were written, never Go's map[...].
		if b, err := json.Marshal(v); err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

func printNode(w io.Writer, n runspec.Node) {
	verb := map[engine.Action]string{engine.Create: "create", engine.Update: "update", engine.Delete: "delete", engine.Adopt: "adopt",
		engine.Forget: "forget", engine.Move: "move to", engine.UnChanged: "wait for"}[n.Action]
	switch n.Status {
	case runspec.NodeUnchanged:
		if n.Health != "" { // unchanged, but waited for until healthy
			fmt.Fprintf(w, "  done     %s %s: %s\n", verb, n.ID, n.Health)
		}
	case runspec.NodeSucceeded:
		if n.Health != "" {
			fmt.Fprintf(w, "  done     %s %s: %s\n", verb, n.ID, n.Health)
			return
		}
		fmt.Fprintf(w, "  done     %s %s\n", verb, n.ID)
	case runspec.NodeFailed:
		fmt.Fprintf(w, "  FAILED   %s %s: %s\n", verb, n.ID, n.Error)
	case runspec.NodeSkipped:
		fmt.Fprintf(w, "  skipped  %s %s\n", verb, n.ID)
	case runspec.NodeCompensated:
		fmt.Fprintf(w, "  undone   %s %s\n", verb, n.ID)
	}
}

func printSummary(w io.Writer, run *client.Run, res runspec.Result, nodes []runspec.Node, took time.Duration) {
	if res.Revision == 0 {
		return
	}
	counts, failed, notRun := outcomes(res.Changes, nodes)
	if o := res.Outcome; o != nil { // the run counted them itself
		counts, failed, notRun = outcomeCounts(o.Done), o.Failed, o.NotRun
	}
	fmt.Fprintf(w, "Release %d %s (%s): %d created, %d updated, %d deleted, ",
		res.Revision, res.Phase, run.Operation, counts[engine.Create], counts[engine.Update], counts[engine.Delete])
	if n := counts[engine.Adopt]; n > 0 {
		fmt.Fprintf(w, "%d adopted, ", n)
	}
	if n := counts[engine.Forget]; n > 0 {
		fmt.Fprintf(w, "%d forgotten (left live), ", n)
	}
	if n := counts[engine.Move]; n > 0 {
		fmt.Fprintf(w, "%d moved, ", n)
	}
	fmt.Fprintf(w, "%d unchanged", counts[engine.UnChanged])
	if failed > 0 || notRun > 0 {
		fmt.Fprintf(w, "; %d failed, %d not changed", failed, notRun)
	}
	fmt.Fprintf(w, " in %s. Run %s.\n", took.Round(10*time.Millisecond), run.RunID)
	if c := res.Compensation; c != nil {
		fmt.Fprintf(w, "Compensation: %d resources put back as they were", len(c.Resources))
		if len(c.Errors) > 0 {
			fmt.Fprintf(w, "; %d could not be:\n  %s", len(c.Errors), strings.Join(c.Errors, "\n  "))
		}
		fmt.Fprintln(w, ".")
	}
}

// endedProgress is the progress an ended run's result holds: each resource's
// final status; false when the result has none (a run older than
// Result.Outcome, or too many resources to carry them).
func endedProgress(res runspec.Result) (runspec.Progress, bool) {
	if res.Outcome == nil || res.Outcome.Nodes == nil {
		return runspec.Progress{}, false
	}
	nodes, err := runspec.UnpackNodes(res.Outcome.Nodes)
	if err != nil {
		return runspec.Progress{}, false
	}
	return runspec.Progress{Stage: runspec.StageDone, Nodes: nodes, Digest: res.Digest, Policies: res.Policies}, true
}

// outcomeCounts is a run's own counts per action.
func outcomeCounts(c runspec.ChangeCounts) map[engine.Action]int {
	return map[engine.Action]int{engine.Create: c.Create, engine.Update: c.Update, engine.Delete: c.Delete, engine.Adopt: c.Adopt,
		engine.Forget: c.Forget, engine.Move: c.Move, engine.UnChanged: c.Unchanged}
}

// outcomes counts what a run did per action. With the nodes' final statuses, a
// node counts under its action only if it succeeded: a failed apply's summary
// must not call the resource that failed "created". Without them (the query
// failed), the preview's plan is all there is.
func outcomes(changes []engine.Change, nodes []runspec.Node) (done map[engine.Action]int, failed, notRun int) {
	done = map[engine.Action]int{}
	if len(nodes) == 0 {
		for _, c := range changes {
			done[c.Action]++
		}
		return done, 0, 0
	}
	for _, n := range nodes {
		switch n.Status {
		case runspec.NodeSucceeded:
			done[n.Action]++
		case runspec.NodeUnchanged:
			done[engine.UnChanged]++
		case runspec.NodeFailed:
			failed++
		default: // skipped, compensated, or never reached
			notRun++
		}
	}
	return done, failed, notRun
}
