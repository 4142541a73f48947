package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                     "0s",
		1234567 * time.Nanosecond:             "1ms",
		850 * time.Millisecond:                "850ms",
		12345 * time.Millisecond:              "12.3s",
		4*time.Minute + 5400*time.Millisecond: "4m5s",
		2*time.Hour + 3*time.Minute + 40*time.Second: "2h4m0s",
		-time.Second: "-",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestPrintRuns: the columns of `run list`, one run per line, a dash where a
// run has no revision or preview yet, the duration so far of a running run.
func TestPrintRuns(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 10, 0, 0, time.Local)
	runs := []client.RunInfo{
		{RunID: "run-2", Operation: "apply", Stack: "web", Status: "applying", Revision: 4, Started: now.Add(-90 * time.Second),
			Changes: &runspec.ChangeCounts{Create: 3, Update: 1}},
		{RunID: "run-1", Operation: "generate", Status: "succeeded", Started: now.Add(-time.Hour), Closed: now.Add(-time.Hour + 1500*time.Millisecond)},
	}
	var b strings.Builder
	if err := printRuns(&b, runs, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and 2 runs:\n%s", len(lines), b.String())
	}
	wantRows := [][]string{
		{"RUN", "ID", "OPERATION", "STACK", "STATUS", "REVISION", "STARTED", "DURATION", "CHANGES"},
		{"run-2", "apply", "web", "applying", "4", "2026-01-02", "03:08:30", "1m30s", "+3", "~1", "-0"},
		{"run-1", "generate", "-", "succeeded", "-", "2026-01-02", "02:10:00", "1.5s", "-"},
	}
	for i, want := range wantRows {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("line %d = %q, want fields %q", i, lines[i], want)
		}
	}
	// Columns line up: every row's STATUS starts where the header's does.
	col := strings.Index(lines[0], "STATUS")
	for _, l := range lines[1:] {
		if l[col-2:col] != "  " || l[col] == ' ' {
			t.Errorf("STATUS column misaligned in %q", l)
		}
	}
}

// TestPrintRunDetails: `run show` names the run's outcome and each resource's
// action, result, duration and error.
func TestPrintRunDetails(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	d := &client.RunDetails{
		RunInfo: client.RunInfo{RunID: "run-1", WorkflowID: "kumo/shop/prod", Operation: "apply", Project: "shop", Workspace: "prod",
			Status: "cancelled", Revision: 2, Started: start, Closed: start.Add(3 * time.Second), Changes: &runspec.ChangeCounts{Create: 2, Unchanged: 1}},
		Error:        "cancelled: maintenance window",
		Compensation: &engine.Compensation{Resources: []string{"v1:ConfigMap:ns:a"}},
		URL:          "http://ui/namespaces/default/workflows/kumo%2Fshop%2Fprod/run-1/history",
		Page:         "http://127.0.0.1:8080/runs/run-1",
		People: &engine.People{
			StartedBy:   &engine.Actor{Name: "local:alice", Verified: true, Time: start},
			Approvals:   []engine.Actor{{Name: "local:bob", Verified: true, Time: start.Add(time.Second), Reason: "looks right"}},
			CancelledBy: &engine.Actor{Name: "eve@host", Time: start.Add(2 * time.Second), Reason: "maintenance window"},
		},
		Resources: []client.ResourceOutcome{
			{ID: "v1:ConfigMap:ns:a", Action: engine.Create, Result: runspec.NodeCompensated, Started: start, Duration: 250 * time.Millisecond},
			{ID: "v1:ConfigMap:ns:b", Action: engine.Create, Result: runspec.NodeSkipped},
			{ID: "v1:ConfigMap:ns:c", Action: engine.UnChanged, Result: runspec.NodeFailed, Started: start, Duration: 2 * time.Second, Error: "line one\nline two"},
		},
	}
	var b strings.Builder
	printRunDetails(&b, d, start.Add(time.Hour))
	out := b.String()
	for _, want := range []string{
		"Status:        cancelled", "Revision:      2", "Duration:      3s", "Plan:          +2 ~0 -0 (2 to create, 0 to update, 0 to delete, 1 unchanged)",
		"Error:         cancelled: maintenance window", "Compensation:  1 resources put back, 0 could not be", "Web UI:        http://ui/namespaces/default/",
		"Page:          http://127.0.0.1:8080/runs/run-1",
		"Started by:    local:alice at " + start.Format(time.DateTime), "Approved by:   local:bob at " + start.Add(time.Second).Format(time.DateTime) + ": looks right",
		"Cancelled by:  eve@host (unverified) at " + start.Add(2*time.Second).Format(time.DateTime) + ": maintenance window",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("run show lacks %q:\n%s", want, out)
		}
	}
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "v1:") {
			rows[f[0]] = strings.Join(f[1:], " ")
		}
	}
	for id, want := range map[string]string{
		"v1:ConfigMap:ns:a": "Create compensated 250ms",
		"v1:ConfigMap:ns:b": "Create skipped -",
		"v1:ConfigMap:ns:c": "UnChanged failed 2s line one line two",
	} {
		if rows[id] != want {
			t.Errorf("row of %s = %q, want %q\n%s", id, rows[id], want, out)
		}
	}
}
