package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runRowJSON is one row of `run list -o json`.
type runRowJSON struct {
	RunID     string `json:"runID"`
	Operation string `json:"operation"`
	Workspace string `json:"workspace"`
	Status    string `json:"status"`
	Revision  int    `json:"revision"`
	Duration  int64  `json:"duration"`
	Changes   *struct {
		Create, Update, Delete, Unchanged int
	} `json:"changes"`
}

func (e *env) runList(args ...string) []runRowJSON {
	e.t.Helper()
	r := e.ok(append([]string{"run", "list", "-o", "json"}, args...)...)
	var rows []runRowJSON
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		e.t.Fatalf("run list -o json: %v\n%s", err, r.stdout)
	}
	return rows
}

// runShowJSON is `run show -o json`.
type runShowJSON struct {
	Status    string `json:"status"`
	Operation string `json:"operation"`
	Revision  int    `json:"revision"`
	Error     string `json:"error"`
	URL       string `json:"url"`
	Resources []struct {
		ID       string `json:"id"`
		Action   string `json:"action"`
		Result   string `json:"result"`
		Duration int64  `json:"duration"`
		Error    string `json:"error"`
	} `json:"resources"`
}

func (e *env) runShow(runID string) runShowJSON {
	e.t.Helper()
	r := e.ok("run", "show", runID, "-o", "json")
	var d runShowJSON
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		e.t.Fatalf("run show -o json: %v\n%s", err, r.stdout)
	}
	return d
}

var runIDInSummary = regexp.MustCompile(`Run ([0-9a-f-]{36})`)

// runIDIn returns the run ID a command printed.
func runIDIn(t *testing.T, out string) string {
	t.Helper()
	m := runIDInSummary.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no run ID in:\n%s", out)
	}
	return m[1]
}

// configMapVersions returns name -> resourceVersion of the ConfigMaps in e's namespace.
func (e *env) configMapVersions() map[string]string {
	e.t.Helper()
	list, err := e.kube.CoreV1().ConfigMaps(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			out[cm.Name] = cm.ResourceVersion
		}
	}
	return out
}

// TestRunListShowWait on a home with the embedded one-shot server: runs made
// by earlier commands are listed, shown and waited for from the same database.
func TestRunListShowWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.ns
	id := func(name string) string { return "v1:ConfigMap:" + ns + ":" + name }
	applied := runIDIn(t, e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", versioned(ns, "a", "1", "b", "1"))).stdout)
	e.ok("preview", "-f", e.writeSpec("v2.yaml", versioned(ns, "a", "2", "b", "1", "c", "1")))
	broken := versioned(ns, "a", "1", "b", "1", "new", "1") + brokenAfter(ns, id("new"))
	failed := runIDIn(t, e.fails([]string{"apply", "--yes", "-f", e.writeSpec("v3.yaml", broken)}, "data.nope").stderr)

	rows := e.runList()
	if len(rows) != 3 {
		t.Fatalf("run list: %d runs, want 3: %+v", len(rows), rows)
	}
	type row struct {
		op, status string
		revision   int
		changes    string
	}
	changes := func(r runRowJSON) string {
		if r.Changes == nil {
			return "-"
		}
		return fmt.Sprintf("+%d ~%d -%d =%d", r.Changes.Create, r.Changes.Update, r.Changes.Delete, r.Changes.Unchanged)
	}
	want := []row{{"apply", "failed", 2, "+2 ~0 -0 =3"}, {"preview", "succeeded", 0, "+1 ~1 -0 =2"}, {"apply", "succeeded", 1, "+3 ~0 -0 =0"}}
	for i, r := range rows {
		if got := (row{r.Operation, r.Status, r.Revision, changes(r)}); got != want[i] {
			t.Errorf("run %d (newest first) = %+v, want %+v", i, got, want[i])
		}
		if r.Workspace != "default" || r.Duration <= 0 {
			t.Errorf("run %d: workspace %q duration %d", i, r.Workspace, r.Duration)
		}
	}
	if rows[0].RunID != failed || rows[2].RunID != applied {
		t.Errorf("run IDs %s, %s; want %s (failed), %s (first apply)", rows[0].RunID, rows[2].RunID, failed, applied)
	}
	for filter, n := range map[string]int{"--status=failed": 1, "--status=completed": 2, "--status=running": 0, "--operation=preview": 1, "--operation=destroy": 0, "--limit=2": 2} {
		if got := e.runList(filter); len(got) != n {
			t.Errorf("run list %s: %d runs, want %d", filter, len(got), n)
		}
	}
	if got := e.runList("--workspace", "prod"); len(got) != 0 {
		t.Errorf("run list --workspace prod: %+v, want none", got)
	}
	table := e.ok("run", "list").stdout
	if !strings.Contains(table, "RUN ID") || !regexp.MustCompile(applied+`\s+apply\s+-\s+succeeded\s+1\s.*\s\+3 ~0 -0\n`).MatchString(table) {
		t.Errorf("run list table:\n%s", table)
	}

	d := e.runShow(applied)
	if d.Status != "succeeded" || d.Revision != 1 || len(d.Resources) != 3 || d.URL != "" {
		t.Fatalf("run show: %+v", d)
	}
	for _, r := range d.Resources {
		if r.Action != "Create" || r.Result != "succeeded" || r.Duration <= 0 {
			t.Errorf("run show: resource %+v, want created with a duration", r)
		}
	}
	d = e.runShow(failed)
	outcome := map[string]string{}
	for _, r := range d.Resources {
		outcome[r.ID] = r.Result + " " + r.Error
	}
	if d.Status != "failed" || !strings.Contains(d.Error, "data.nope") || outcome[id("new")] != "succeeded " || !strings.HasPrefix(outcome[id("broken")], "failed ") {
		t.Errorf("run show of the failed run: %+v", d)
	}
	text := e.ok("run", "show", applied, "--ui-url", "http://127.0.0.1:8233").stdout
	for _, w := range []string{"Status:", "succeeded", "Plan:", "+3 ~0 -0", "Web UI:", "http://127.0.0.1:8233/namespaces/default/workflows/kumo%2F" + e.project + "%2Fdefault/" + applied, "RESOURCE", id("a")} {
		if !strings.Contains(text, w) {
			t.Errorf("run show lacks %q:\n%s", w, text)
		}
	}

	if r := e.run("run", "wait", applied); r.code != 0 || !strings.Contains(r.stdout, "ended succeeded") {
		t.Errorf("run wait of a succeeded run: %s", r)
	}
	if r := e.run("run", "wait", failed); r.code != 1 || !strings.Contains(r.stderr, "data.nope") {
		t.Errorf("run wait of a failed run: %s", r)
	}
	if r := e.ok("run", "logs", applied, "--follow"); !strings.Contains(r.stdout, "revision 1 succeeded") {
		t.Errorf("run logs --follow of an ended run: %s", r)
	}

	e.fails([]string{"run", "show", "0f8e2c1a-0000-4000-8000-000000000001"}, "no such run")
	e.fails([]string{"run", "show", "not-a-run"}, "not a run ID")
	e.fails([]string{"run", "wait", applied, "--project", "other"}, "belongs to project", e.project)
	e.fails([]string{"run", "cancel", applied}, "has ended", "succeeded")
	e.fails([]string{"run", "list", "--status", "done"}, "unknown status")
}

// TestRunCancel (with a Temporal server and a worker, as under `kumo server`):
// cancelling a 1,000-resource apply lets the resources in flight finish, starts
// no other, and fails the release with the reason; the cluster holds exactly
// what the release recorded, or, with --rollback-on-failure, what it held
// before. A run awaiting approval is cancelled too.
func TestRunCancel(t *testing.T) {
	t.Parallel()
	// Enough that the apply (parallelism 1, batches of 100 applied in a few
	// milliseconds each resource) is still running when the cancel lands.
	const n = 1000
	e := newEnv(t)
	e.flags = temporalServer(t).flags()
	e.worker()
	ns := e.ns
	var cms []string
	for i := 0; i < n; i++ {
		cms = append(cms, fmt.Sprintf("c%04d", i), "2")
	}

	// cancel starts an apply of spec, cancels it once progressed says the
	// apply is under way (early: a batch applies a resource in milliseconds),
	// and returns the apply's and a `run wait`'s results.
	cancel := func(revision int, what string, progressed func() bool, spec string, flags ...string) (apply, wait result) {
		t.Helper()
		args := append([]string{"apply", "--yes", "--parallelism", "1", "-f", e.writeSpec(fmt.Sprintf("v%d.yaml", revision), spec)}, flags...)
		_, applyDone := e.background(nil, args...)
		waitFor(t, what, 2*time.Minute, progressed)
		runID, _ := e.release(revision)["runID"].(string)
		_, waitDone := e.background(nil, "run", "wait", runID)
		before, start := len(e.configMapNames()), time.Now()
		r := e.ok("run", "cancel", runID, "--reason", "maintenance window")
		if !strings.Contains(r.stdout, "Cancelling apply run "+runID) {
			t.Errorf("run cancel: %s", r)
		}
		live := len(e.configMapNames())
		if live >= n {
			t.Fatalf("the apply had created all %d ConfigMaps before the cancel", live)
		}
		t.Logf("revision %d: `run cancel` with %d ConfigMaps live returned after %s (run ended, compensation included), %d live then",
			revision, before, time.Since(start).Round(time.Millisecond), live)
		return applyDone(), waitDone()
	}
	checkCancelled := func(revision int, apply, wait result) map[string]any {
		t.Helper()
		if apply.code != exitCancelled || wait.code != exitCancelled || !strings.Contains(wait.stderr, "cancelled: maintenance window") {
			t.Errorf("apply and run wait of the cancelled run should exit %d:\napply: %s\nrun wait: %s", exitCancelled, apply, wait)
		}
		rel := e.release(revision)
		if rel["phase"] != "failed" || rel["error"] != "cancelled: maintenance window" {
			t.Errorf("release %d: %v %q, want failed with the reason", revision, rel["phase"], rel["error"])
		}
		runID, _ := rel["runID"].(string)
		if rows := e.runList("--status", "cancelled"); len(rows) == 0 || rows[0].RunID != runID {
			t.Errorf("run list --status cancelled: %+v, want %s first", rows, runID)
		}
		return rel
	}

	// Without rollback: what was applied stays, recorded, and nothing else is live.
	apply, wait := cancel(1, "5 ConfigMaps", func() bool { return len(e.configMapNames()) > 5 }, versioned(ns, cms...))
	rel := checkCancelled(1, apply, wait)
	state := stateVersions(rel)
	live := e.configMapVersions()
	if len(live) == 0 || len(live) >= n {
		t.Errorf("%d ConfigMaps live after the cancel, want some but not all %d", len(live), n)
	}
	for name, rv := range live {
		if state["v1:ConfigMap:"+ns+":"+name] != rv {
			t.Errorf("%s is live at resourceVersion %s, recorded %q: applied but not recorded", name, rv, state["v1:ConfigMap:"+ns+":"+name])
		}
	}
	if len(state) != len(live)+1 { // and the Namespace
		t.Errorf("release records %d resources, %d ConfigMaps are live", len(state), len(live))
	}
	d := e.runShow(rel["runID"].(string))
	results := map[string]int{}
	for _, r := range d.Resources {
		results[r.Result]++
	}
	if d.Status != "cancelled" || results["skipped"] == 0 || results["succeeded"] != len(live)+1 || results["failed"] != 0 {
		t.Errorf("run show of the cancelled run: status %s, results %v", d.Status, results)
	}

	// With --rollback-on-failure: the cluster is back as it was.
	before := e.configMapData()
	for i := range cms {
		if i%2 == 1 {
			cms[i] = "3"
		}
	}
	apply, wait = cancel(2, "c0005 updated", func() bool { return e.configMapData()["c0005"] == "3" }, versioned(ns, cms...), "--rollback-on-failure")
	checkCancelled(2, apply, wait)
	if !strings.Contains(apply.stdout, "Compensation:") {
		t.Errorf("apply output lacks the compensation:\n%s", apply.stdout)
	}
	if after := e.configMapData(); !mapsEqual(after, before) {
		t.Errorf("after the cancelled apply with --rollback-on-failure: %d ConfigMaps, want the %d from before it", len(after), len(before))
	}

	// A run awaiting approval: the cancel ends the wait. (A file, so that the
	// apply's end is not held up by copying its input.)
	answer, answerWriter, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer answerWriter.Close()
	_, applyDone := e.background(answer, "apply", "-f", e.writeSpec("v3.yaml", versioned(ns, "only", "1")))
	answer.Close()
	var rows []runRowJSON
	waitFor(t, "the apply to await approval", time.Minute, func() bool {
		rows = e.runList("--status", "awaiting-approval")
		return len(rows) == 1
	})
	if rows[0].Changes == nil || rows[0].Changes.Create != 1 {
		t.Errorf("run awaiting approval: %+v, want its plan counts", rows[0])
	}
	e.ok("run", "cancel", rows[0].RunID, "--reason", "maintenance window")
	checkCancelled(3, applyDone(), result{code: exitCancelled, stderr: "cancelled: maintenance window"})
}
