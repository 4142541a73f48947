package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRunQueue: against one kumo server, while a first apply waits at its
// confirmation prompt, two queued applies: one with --queue (followed by its
// process), one queued by the workspace's runs.queue (--detach). `run list` shows both queued
// with their places; the second is cancelled with `run cancel ID`. Once the
// first apply is confirmed and ends, the queued one starts, previews then
// (its release is revision 2, of its own spec) and succeeds, as the same
// subject; the cancelled one never runs. A plain apply while the stack is
// busy still fails at once, naming --queue.
func TestRunQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kube-apiserver and kumo server")
	}
	t.Parallel()
	e := newEnv(t)
	e.startServer()
	first := e.writeSpec("first.yaml", manyConfigMaps(e.ns, 3))
	second := e.writeSpec("second.yaml", manyConfigMaps(e.ns, 5))
	third := e.writeSpec("third.yaml", manyConfigMaps(e.ns, 7))

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, waitFirst := e.background(r, "apply", "-f", first)
	r.Close()
	waitFor(t, "the first apply to await approval", 2*time.Minute, func() bool {
		rows := e.releases()
		return len(rows) == 1 && rows[0].Phase == "awaiting-approval"
	})
	e.fails([]string{"apply", "--yes", "-f", second}, "locked by run", "--queue")

	_, waitSecond := e.background(nil, "apply", "--queue", "--yes", "-f", second)
	var queued []runRow
	waitFor(t, "the second apply to be queued", time.Minute, func() bool {
		queued = e.queuedRuns()
		return len(queued) == 1
	})
	secondID := queued[0].RunID
	// The workspace's default queues the third without --queue;
	// --queue=false still refuses at once.
	e.ok("workspace", "update", "default", "--file", e.writeSpec("ws.yaml", "runs: {queue: true}\n"))
	e.fails([]string{"apply", "--queue=false", "--yes", "-f", third}, "locked by run")
	res := e.ok("apply", "--yes", "--detach", "-f", third)
	m := regexp.MustCompile(`Queued apply run ([0-9a-f-]{36}) on \S+ at position 2\.`).FindStringSubmatch(res.stdout)
	if m == nil {
		t.Fatalf("apply --queue --detach while one waits: %s", res)
	}
	thirdID := m[1]
	queued = e.queuedRuns()
	if len(queued) != 2 || queued[0].RunID != secondID || queued[0].Position != 1 || queued[1].RunID != thirdID || queued[1].Position != 2 {
		t.Fatalf("queued runs %+v, want %s at 1 and %s at 2", queued, secondID, thirdID)
	}
	if out := e.ok("run", "list").stdout; !strings.Contains(out, thirdID) || !strings.Contains(out, "queued (2)") {
		t.Errorf("run list does not show %s queued at 2:\n%s", thirdID, out)
	}
	if out := e.ok("run", "cancel", "--no-wait", thirdID).stdout; !strings.Contains(out, "Removed queued apply run "+thirdID) {
		t.Errorf("run cancel of a queued run: %s", out)
	}
	if q := e.queuedRuns(); len(q) != 1 || q[0].RunID != secondID {
		t.Errorf("queued runs after the cancel: %+v, want %s alone", q, secondID)
	}
	if rows := e.releases(); len(rows) != 1 {
		t.Fatalf("a queued run started before its turn: %+v", rows)
	}
	// No release names the queued run's spec yet: a collection long past the
	// grace keeps it because the queue says a run waits for it, and removes
	// the cancelled run's.
	gcCandidates(t, e.home, 2*time.Hour)
	if r := e.ok("backend", "gc"); !strings.Contains(r.stdout, "Removed specs/") {
		t.Errorf("gc while a run waits in the queue:\n%s", r.stdout)
	}
	if specs := specFiles(t, e.home); len(specs) != 2 {
		t.Fatalf("specs after gc %v, want the awaiting apply's and the queued run's", specs)
	}

	fmt.Fprintln(w, "yes")
	w.Close()
	if r := waitFirst(); r.code != 0 {
		t.Fatalf("the first apply: %s", r)
	}
	r2 := waitSecond()
	if r2.code != 0 || !strings.Contains(r2.stdout, "Its turn: apply run") {
		t.Fatalf("the queued apply: %s", r2)
	}
	rows := e.releases()
	if len(rows) != 2 || rows[0].Revision != 1 || rows[1].Revision != 2 || rows[1].Phase != "succeeded" || rows[1].Resources != 5 {
		t.Fatalf("releases %+v, want 1 and then the queued spec's 5 resources as 2", rows)
	}
	rel1, rel2 := e.release(1), e.release(2)
	s1, _ := rel1["startedBy"].(map[string]any)
	s2, _ := rel2["startedBy"].(map[string]any)
	if s1["name"] == nil || s1["name"] != s2["name"] || s2["verified"] != true {
		t.Errorf("revision 2 started by %v, want %v, verified", s2, s1)
	}
	// Revision 1's record last changed when it ended.
	ended1, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(rel1["modifyTime"]))
	created2, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(rel2["createTime"]))
	if created2.IsZero() || ended1.IsZero() || created2.Before(ended1) {
		t.Errorf("revision 2 created %v, revision 1 ended %v: the queued run must start after", rel2["createTime"], rel1["modifyTime"])
	}
	time.Sleep(2 * time.Second)
	if rows := e.releases(); len(rows) != 2 {
		t.Errorf("the cancelled queued run ran: %+v", rows)
	}
	if n := len(e.configMapNames()); n != 4 {
		t.Errorf("%d ConfigMaps live, want the queued spec's 4", n)
	}
}

// queuedRuns lists the runs `run list --status queued` shows.
func (e *env) queuedRuns() []runRow {
	e.t.Helper()
	var rows []runRow
	r := e.ok("run", "list", "--status", "queued", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		e.t.Fatalf("run list --status queued -o json: %v\n%s", err, r.stdout)
	}
	return rows
}
