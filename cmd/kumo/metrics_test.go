package main

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

// metricValue returns the value of the series of metric whose labels include
// each of labels ("name" → value), -1 when there is none.
func metricValue(body, metric string, labels map[string]string) float64 {
	re := regexp.MustCompile(`(?m)^` + metric + `\{([^}]*)\} (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		ok := true
		for k, v := range labels {
			if !regexp.MustCompile(`(^|,)` + k + `="` + regexp.QuoteMeta(v) + `"`).MatchString(m[1]) {
				ok = false
			}
		}
		if ok {
			f, _ := strconv.ParseFloat(m[2], 64)
			return f
		}
	}
	return -1
}

// TestWorkerMetrics: a worker's /metrics has kumo's own metrics next to the
// SDK's: runs started and finished by operation and outcome, their durations,
// node steps by step, runtime and result with their latencies, drift checks,
// and the runs awaiting approval right now.
func TestWorkerMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.flags = temporalServer(t).flags()
	addr := freeAddress(t)
	e.background(nil, "worker", "--metrics-address", addr)
	scrape := func() string { return httpBody(t, "http://"+addr+"/metrics") }
	waitFor(t, "the worker's metrics", time.Minute, func() bool { return httpStatus("http://"+addr+"/metrics") == 200 })
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+configMap(e.ns, "a", "dependsOn: [v1:Namespace:"+e.ns+"]"))

	runID, _ := e.detach("apply", "-f", spec) // waits for approval
	waitFor(t, "kumo_runs_awaiting_approval 1", time.Minute, func() bool {
		return metricValue(scrape(), "kumo_runs_awaiting_approval", nil) == 1
	})
	e.ok("run", "cancel", runID)
	e.ok("apply", "--yes", "-f", spec)
	e.ok("drift", "check")
	waitFor(t, "kumo_runs_awaiting_approval 0", time.Minute, func() bool {
		return metricValue(scrape(), "kumo_runs_awaiting_approval", nil) == 0
	})

	body := scrape()
	for _, c := range []struct {
		metric string
		labels map[string]string
		want   float64
	}{
		{"kumo_runs_started", map[string]string{"operation": "apply"}, 2},
		{"kumo_runs_finished", map[string]string{"operation": "apply", "outcome": "succeeded"}, 1},
		{"kumo_runs_finished", map[string]string{"operation": "apply", "outcome": "cancelled"}, 1},
		{"kumo_run_duration_seconds_count", map[string]string{"operation": "apply", "outcome": "succeeded"}, 1},
		// two previews per apply, two applies in the one that went ahead
		{"kumo_node_steps", map[string]string{"step": "preview", "runtime": "Kubernetes", "result": "ok"}, 4},
		{"kumo_node_steps", map[string]string{"step": "apply", "runtime": "Kubernetes", "result": "ok"}, 2},
		{"kumo_node_step_duration_seconds_count", map[string]string{"step": "apply", "runtime": "Kubernetes"}, 2},
		{"kumo_drift_checks", map[string]string{"outcome": "in-sync"}, 1},
		{"kumo_drifted_resources", map[string]string{"outcome": "in-sync"}, 0},
		{"kumo_runs_finished", map[string]string{"operation": "drift", "outcome": "succeeded"}, 1},
	} {
		if got := metricValue(body, c.metric, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.metric, c.labels, got, c.want)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", regexp.MustCompile(`(?m)^kumo_.*$`).FindAllString(body, -1))
	}
}
