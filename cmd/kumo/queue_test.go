package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// activityTypes returns the activity types a worker's metrics count as
// executed as ordinary activities (none while it does not answer yet).
func activityTypes(t *testing.T, metricsAddr string) map[string]bool {
	return executedTypes(t, metricsAddr, `temporal_activity_execution_latency`)
}

// stepTypes is activityTypes with the local activities too (the release's
// steps, a chain's nodes), which have metrics of their own: every step the
// worker ran itself.
func stepTypes(t *testing.T, metricsAddr string) map[string]bool {
	return executedTypes(t, metricsAddr, `temporal_(?:local_)?activity_execution_latency`)
}

func executedTypes(t *testing.T, metricsAddr, metric string) map[string]bool {
	t.Helper()
	types := map[string]bool{}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		return types
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^` + metric + `\w*_count\{[^}]*activity_type="(\w+)"[^}]*\} [1-9]`)
	for _, m := range re.FindAllStringSubmatch(string(body), -1) {
		types[m[1]] = true
	}
	return types
}

// TestWorkspaceTaskQueue: a workspace with temporal.taskQueue edge. With no
// worker on edge, its apply says it waits for one (in the CLI's progress and
// in `kumo run show`) instead of hanging silently; `kumo worker --task-queue
// edge` then runs its runtime steps, and only those: the default queue's
// worker runs the workflow and the release steps, never a Kubernetes call.
func TestWorkspaceTaskQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.flags = temporalServer(t).flags()
	mainMetrics := freeAddress(t)
	e.background(nil, "worker", "--metrics-address", mainMetrics)
	ws := filepath.Join(t.TempDir(), "edge.yaml")
	if err := os.WriteFile(ws, []byte("temporal:\n  taskQueue: edge\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("workspace", "create", "edge", "--file", ws)
	e.ok("workspace", "switch", "edge")
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+configMap(e.ns, "a", "dependsOn: [v1:Namespace:"+e.ns+"]"))
	_, wait := e.background(nil, "apply", "--yes", "-f", spec)

	var runID, show string
	waitFor(t, "run show to say the run waits for a worker on edge", 2*time.Minute, func() bool {
		if runID == "" {
			if rows := e.runList("--workspace", "edge"); len(rows) > 0 {
				runID = rows[0].RunID
			}
			return false
		}
		show = e.ok("run", "show", runID).stdout
		return strings.Contains(show, "waiting for a worker on queue edge")
	})
	t.Logf("run show:\n%s", show)
	if len(e.configMapNames()) != 0 {
		t.Fatalf("ConfigMaps were applied with no worker on edge")
	}
	e.fails([]string{"status"}, "status of "+e.project+"/edge: waiting for a worker on queue edge")

	// The edge worker finds the cluster in its own environment, which a
	// status read without --kubeconfig relies on below.
	edgeMetrics := freeAddress(t)
	e.environ = []string{"KUBECONFIG=" + e.cluster.Kubeconfig}
	e.background(nil, "worker", "--task-queue", "edge", "--metrics-address", edgeMetrics)
	e.environ = nil
	r := wait()
	if r.code != 0 || !strings.Contains(r.stdout, "waiting for a worker on queue edge") {
		t.Fatalf("apply: want success after printing that it waits for a worker on edge: %s", r)
	}
	if rel := e.release(0); rel["phase"] != "succeeded" {
		t.Fatalf("release: %v", rel)
	}
	if names := e.configMapNames(); strings.Join(names, ",") != "a" {
		t.Fatalf("ConfigMaps live: %v", names)
	}
	if show := e.ok("run", "show", runID).stdout; strings.Contains(show, "waiting for a worker") {
		t.Errorf("run show of the finished run still says it waits:\n%s", show)
	}

	runs := len(e.runList())
	statusThroughQueue(t, e)
	if n := len(e.runList()); n != runs {
		t.Errorf("run list shows %d runs after kumo status, %d before: a status read is no run", n, runs)
	}

	runtimeSteps := []string{"PreviewNode", "ApplyResource", "ReadStatus"}
	edgeRan, mainRan := stepTypes(t, edgeMetrics), stepTypes(t, mainMetrics)
	for _, typ := range runtimeSteps {
		if !edgeRan[typ] {
			t.Errorf("the edge worker ran no %s: it ran %v", typ, edgeRan)
		}
		if mainRan[typ] {
			t.Errorf("the default queue's worker ran %s", typ)
		}
	}
	for _, typ := range []string{"CreateRelease", "FinishRelease"} {
		if edgeRan[typ] || !mainRan[typ] {
			t.Errorf("%s ran on the edge worker (%v) or not on the default queue's (%v)", typ, edgeRan[typ], mainRan[typ])
		}
	}
	t.Logf("edge worker ran %v; default worker ran %v", edgeRan, mainRan)
}

// statusThroughQueue runs `kumo status` of the edge workspace from a machine
// that cannot reach the cluster (no --kubeconfig, a KUBECONFIG that does not
// exist, no ~/.kube/config): it succeeds only because the edge worker reads.
func statusThroughQueue(t *testing.T, e *env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := e.commandNoCluster(ctx, "status", "-o", "json")
	cmd.Env = append(cmd.Env, "KUBECONFIG="+filepath.Join(t.TempDir(), "none"), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("kumo status through queue edge: %v\n%s%s", err, out, stderr)
	}
	var st struct {
		Revision  int                     `json:"revision"`
		Health    struct{ Status string } `json:"health"`
		Resources []struct{ ID string }   `json:"resources"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("kumo status -o json: %v\n%s", err, out)
	}
	if st.Revision != 1 || st.Health.Status != "Healthy" || len(st.Resources) != 2 {
		t.Errorf("kumo status through queue edge: %s", out)
	}
}
