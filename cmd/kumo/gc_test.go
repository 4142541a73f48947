package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/runspec"
)

// gcCandidates marks what a collection would remove as first seen ago: a
// collection through the client's API, as of ago, on the home's backend
// (what a server that had been collecting for that long would have marked).
func gcCandidates(t *testing.T, home string, ago time.Duration) {
	t.Helper()
	if _, err := client.CollectBackend(context.Background(), client.Options{Home: home}, client.DefaultGCPolicy(), time.Now().Add(-ago), false); err != nil {
		t.Fatal(err)
	}
}

func specFiles(t *testing.T, home string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(home, "specs"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return out
}

// TestBackendGCByHand: `kumo backend gc --dry-run` lists what would go and
// removes nothing; `kumo backend gc` removes a preview's spec no release
// names once it has been unreferenced for the grace, and run logs past
// their retention; the release and its spec stay and read back.
func TestBackendGCByHand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	applied := e.writeSpec("spec.yaml", manyConfigMaps(e.ns, 3))
	e.ok("apply", "--yes", "-f", applied)
	e.ok("preview", "-f", e.writeSpec("other.yaml", manyConfigMaps(e.ns, 4)))
	if n := len(specFiles(t, e.home)); n != 2 {
		t.Fatalf("%d specs stored, want the apply's and the preview's", n)
	}
	r := e.ok("backend", "gc", "--dry-run")
	if strings.Contains(r.stdout, "Would remove specs/") || !strings.Contains(r.stdout, "Would remove 0 records") {
		t.Errorf("a dry run right after the runs:\n%s", r.stdout)
	}
	gcCandidates(t, e.home, 2*time.Hour)
	r = e.ok("backend", "gc", "--dry-run", "--retain-run-logs", "1h", "-o", "json")
	var dry client.GCReport
	if err := json.Unmarshal([]byte(r.stdout), &dry); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if !dry.DryRun || dry.Specs != 1 || dry.RunLogs != 1 || dry.Releases != 1 {
		t.Errorf("dry run after the grace: %+v, want the preview's spec and the apply's log", dry)
	}
	if n := len(specFiles(t, e.home)); n != 2 {
		t.Errorf("the dry run removed a spec: %d left", n)
	}
	r = e.ok("backend", "gc", "--retain-run-logs", "1h")
	if !strings.Contains(r.stdout, "Removed specs/") || !strings.Contains(r.stdout, "Removed runs/") {
		t.Errorf("gc output:\n%s", r.stdout)
	}
	rel := e.release(0)
	hash, _ := rel["specHash"].(string)
	if left := specFiles(t, e.home); len(left) != 1 || left[0] != hash {
		t.Errorf("specs left %v, want the release's %s only", left, hash)
	}
	show := e.ok("release", "show", "--revision", "1", "-o", "json")
	if !strings.Contains(show.stdout, "v1:ConfigMap:"+e.ns+":cm-002") {
		t.Errorf("release 1 after gc:\n%s", show.stdout)
	}
	e.fails([]string{"backend", "gc", "--gc-grace", "1m"}, "gc grace 1m0s: must be at least 10m0s")
	e.fails([]string{"backend", "gc", "--retain-audit", "2h"}, "audit retention 2h0m0s")
}

// TestBackendGCRetainReleases: `kumo backend gc --retain-releases 2` removes
// every revision but the newest two (--dry-run only lists them); `release
// list` shows the kept ones and says which went; reading or rolling back to a
// removed revision is refused naming it and the oldest kept one, and the
// next apply makes the next revision. A limit of 1, or a negative one, is
// refused naming the flag.
func TestBackendGCRetainReleases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := 1; i <= 4; i++ {
		e.ok("apply", "--yes", "-f", e.writeSpec(fmt.Sprintf("spec%d.yaml", i), manyConfigMaps(e.ns, i)))
	}
	e.fails([]string{"backend", "gc", "--retain-releases", "1"}, "--retain-releases 1: must be 0 (keep every revision) or at least 2")
	e.fails([]string{"backend", "gc", "--retain-releases", "-3"}, "--retain-releases -3: must be 0")
	revisions := func() []int {
		t.Helper()
		var rows []releaseRow
		r := e.ok("release", "list", "-o", "json")
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
			t.Fatalf("%v: %s", err, r.stdout)
		}
		var out []int
		for _, row := range rows {
			out = append(out, row.Revision)
		}
		return out
	}
	r := e.ok("backend", "gc", "--dry-run", "--retain-releases", "2", "-o", "json")
	var dry client.GCReport
	if err := json.Unmarshal([]byte(r.stdout), &dry); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if !dry.DryRun || dry.Revisions != 2 || len(dry.Pruned) != 1 || !slices.Equal(dry.Pruned[0].Revisions, []int{1, 2}) || dry.Pruned[0].Floor != 3 {
		t.Errorf("dry run with --retain-releases 2: %+v, want revisions 1 and 2 listed, 3 the oldest kept", dry)
	}
	if got := revisions(); !slices.Equal(got, []int{1, 2, 3, 4}) {
		t.Fatalf("revisions after the dry run: %v", got)
	}
	r = e.ok("backend", "gc", "--retain-releases", "2")
	if !strings.Contains(r.stdout, "Removed revisions 1-2 of "+e.project+"/") || !strings.Contains(r.stdout, "the oldest kept is 3") {
		t.Errorf("gc output:\n%s", r.stdout)
	}
	if got := revisions(); !slices.Equal(got, []int{3, 4}) {
		t.Errorf("revisions after gc --retain-releases 2: %v, want 3 and 4", got)
	}
	if list := e.ok("release", "list"); !strings.Contains(list.stdout, "Revisions 1 to 2 were removed by the release history limit") {
		t.Errorf("release list after gc:\n%s", list.stdout)
	}
	e.fails([]string{"release", "show", "--revision", "1"}, "revision 1 of "+e.project+"/", "oldest kept revision is 3")
	e.fails([]string{"rollback", "--revision", "2", "--yes"}, "cannot roll back to revision 2 of "+e.project+"/", "the oldest kept revision is 3")
	if rel := e.release(3); rel["revision"] != float64(3) {
		t.Errorf("revision 3 after gc: %v", rel["revision"])
	}
	e.ok("apply", "--yes", "-f", e.writeSpec("spec5.yaml", manyConfigMaps(e.ns, 5)))
	if got := revisions(); !slices.Equal(got, []int{3, 4, 5}) {
		t.Errorf("revisions after the next apply: %v, want 3 to 5", got)
	}
}

// TestServerKeepsAGCSchedule: kumo server creates the kumo-gc schedule with
// its --retain-* policy; a collection it starts removes what is due, as the
// owner's backend.Collect would; bad settings stop the server at start.
func TestServerKeepsAGCSchedule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fails([]string{"server", "--address", "127.0.0.1:0", "--gc-grace", "30s"}, "--retain-*/--gc-grace", "gc grace 30s")
	e.fails([]string{"server", "--address", "127.0.0.1:0", "--gc-every", "5s"}, "--gc-every 5s: the shortest is 1m0s")
	srv := e.startServer("--retain-run-logs", "1h", "--gc-every", "6h")
	e.ok("apply", "--yes", "-f", e.writeSpec("spec.yaml", manyConfigMaps(e.ns, 3)))
	e.ok("preview", "-f", e.writeSpec("other.yaml", manyConfigMaps(e.ns, 4)))
	gcCandidates(t, e.home, 2*time.Hour)

	ctx := context.Background()
	tc, err := sdkclient.Dial(sdkclient.Options{HostPort: srv.info.Address, Namespace: srv.info.Namespace,
		Logger: sdklog.NewStructuredLogger(quietLogger()), ConnectionOptions: ownerConnection(t, e.home)})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	// The raw API: the schedule's summary is sealed with the home's codec key.
	describe := func() *workflowservice.DescribeScheduleResponse {
		t.Helper()
		d, err := tc.WorkflowService().DescribeSchedule(ctx, &workflowservice.DescribeScheduleRequest{Namespace: srv.info.Namespace, ScheduleId: runspec.GCScheduleID})
		if err != nil {
			t.Fatalf("the server's gc schedule: %v", err)
		}
		return d
	}
	d := describe()
	if iv := d.Schedule.Spec.Interval; len(iv) != 1 || iv[0].Interval.AsDuration() != 6*time.Hour {
		t.Errorf("gc schedule intervals %v, want every 6h", iv)
	}
	if typ := d.Schedule.Action.GetStartWorkflow().GetWorkflowType().GetName(); typ != runspec.GCWorkflow {
		t.Errorf("gc schedule starts %q", typ)
	}
	if err := tc.ScheduleClient().GetHandle(ctx, runspec.GCScheduleID).Trigger(ctx, sdkclient.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	var wid, rid string
	waitFor(t, "the triggered collection to start", time.Minute, func() bool {
		if a := describe().Info.RecentActions; len(a) > 0 {
			wid, rid = a[0].StartWorkflowResult.WorkflowId, a[0].StartWorkflowResult.RunId
		}
		return wid != ""
	})
	waitFor(t, "the collection to end", 2*time.Minute, func() bool {
		desc, err := tc.DescribeWorkflowExecution(ctx, wid, rid)
		if err != nil {
			return false
		}
		st := desc.WorkflowExecutionInfo.Status
		if st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			t.Fatalf("collection %s ended %s", wid, st)
		}
		return st == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	})
	hash, _ := e.release(0)["specHash"].(string)
	if left := specFiles(t, e.home); len(left) != 1 || left[0] != hash {
		t.Errorf("specs after the scheduled collection %v, want the release's %s only", left, hash)
	}
	if ents, _ := os.ReadDir(filepath.Join(e.home, "runs")); len(ents) != 0 {
		t.Errorf("%d run logs after the scheduled collection, want none (retention 1h, first seen 2h ago)", len(ents))
	}
	e.ok("release", "show", "--revision", "1")
}
