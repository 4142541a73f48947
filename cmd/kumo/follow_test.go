package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestOutcomesCountWhatHappened: a failed apply's summary counts the node that
// failed, and those never reached, apart from what was created.
func TestOutcomesCountWhatHappened(t *testing.T) {
	changes := []engine.Change{{ID: "a", Action: engine.Create}, {ID: "b", Action: engine.Create}, {ID: "c", Action: engine.Update}, {ID: "d", Action: engine.UnChanged}}
	nodes := []runspec.Node{
		{ID: "a", Action: engine.Create, Status: runspec.NodeSucceeded},
		{ID: "b", Action: engine.Create, Status: runspec.NodeFailed},
		{ID: "c", Action: engine.Update, Status: runspec.NodeSkipped},
		{ID: "d", Action: engine.UnChanged, Status: runspec.NodeUnchanged},
	}
	done, failed, notRun := outcomes(changes, nodes)
	if done[engine.Create] != 1 || done[engine.Update] != 0 || done[engine.UnChanged] != 1 || failed != 1 || notRun != 1 {
		t.Errorf("outcomes %v, %d failed, %d not run; want 1 created, 1 unchanged, 1 failed, 1 not run", done, failed, notRun)
	}
	// Without the nodes' statuses, the plan is counted.
	done, failed, notRun = outcomes(changes, nil)
	if done[engine.Create] != 2 || done[engine.Update] != 1 || failed != 0 || notRun != 0 {
		t.Errorf("outcomes from the plan %v, %d, %d", done, failed, notRun)
	}
}

// TestARunNotApprovedEndsCancelled: a run cancelled, or whose plan was not
// approved (at the prompt too, with no terminal to answer it), is called
// cancelled, as `kumo run list` shows it; a run that failed, failed.
func TestARunNotApprovedEndsCancelled(t *testing.T) {
	if got := endedAs(runspec.Result{Status: runspec.StatusCancelled}); got != "cancelled" {
		t.Errorf("a cancelled run ended %q", got)
	}
	if got := endedAs(runspec.Result{Status: runspec.StatusFailed}); got != "failed" {
		t.Errorf("a failed run ended %q", got)
	}
}

// Maps and lists print as JSON (what the user wrote), never in Go's
// map[...] syntax.
func TestShowValueCompound(t *testing.T) {
	for v, want := range map[string]string{
		showValue(map[string]any{"message": "x", "n": int64(1)}): `{"message":"x","n":1}`,
		showValue([]any{"a", map[string]any{"b": true}}):         `["a",{"b":true}]`,
		showValue("s"):      `"s"`,
		showValue(int64(3)): `3`,
	} {
		if v != want {
			t.Errorf("showValue: got %s, want %s", v, want)
		}
	}
}

// TestSummaryFromTheRunsOutcome: a run too large to carry its changes in its
// result (10,000 resources) still ends with its counts: the run's own Outcome,
// with no changes and no nodes asked of it.
func TestSummaryFromTheRunsOutcome(t *testing.T) {
	res := runspec.Result{Revision: 3, Phase: engine.PhaseSucceeded, ChangesOmitted: 10001,
		Outcome: &runspec.Outcome{Done: runspec.ChangeCounts{Create: 9998, Unchanged: 1}, Failed: 1, NotRun: 1, Total: 10001}}
	var out strings.Builder
	printSummary(&out, &client.Run{Operation: "apply", RunID: "r1"}, res, nil, time.Second)
	want := "Release 3 succeeded (apply): 9998 created, 0 updated, 0 deleted, 1 unchanged; 1 failed, 1 not changed in 1s. Run r1.\n"
	if out.String() != want {
		t.Errorf("summary\n%q\nwant\n%q", out.String(), want)
	}
	// The nodes the result packs are the progress shown at the end.
	packed, err := runspec.PackNodes([]runspec.Node{{ID: "a", Action: engine.Create, Status: runspec.NodeSucceeded}})
	if err != nil {
		t.Fatal(err)
	}
	res.Outcome.Nodes = packed
	p, ok := endedProgress(res)
	if !ok || len(p.Nodes) != 1 || p.Nodes[0].ID != "a" || p.Stage != runspec.StageDone {
		t.Errorf("ended progress %+v, %v", p, ok)
	}
	if _, ok := endedProgress(runspec.Result{}); ok {
		t.Error("a result without an outcome gave a progress")
	}
}
