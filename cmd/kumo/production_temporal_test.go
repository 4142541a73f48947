package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/internal/s3test"
	"github.com/kumoproj/kumo/internal/temporaltest"
)

// productionNamespace is the Temporal namespace kumo temporal setup
// registers on the production-shaped cluster.
const productionNamespace = "kumo-platform"

// productionFleet is Temporal as production runs it (temporaltest: four
// services as processes, PostgreSQL, mutual TLS on the frontend), prepared
// with kumo temporal setup, and two kumo workers on it with a codec key and
// releases in S3, each restartable.
type productionFleet struct {
	t        *testing.T
	temporal *temporaltest.Cluster
	base     *env // the workers' settings; each test run copies them
	logs     string

	mu      sync.Mutex
	workers []*exec.Cmd
	exited  []chan struct{}
}

func startProductionFleet(t *testing.T) *productionFleet {
	t.Helper()
	c := temporaltest.Start(t)
	srv := s3test.Start(t)
	e := s3Env(t, srv, srv.Bucket(t))
	fleetKeyFile(t)
	e.environ = append(e.environ,
		"TEMPORAL_ADDRESS="+c.Address, "TEMPORAL_NAMESPACE="+productionNamespace,
		"TEMPORAL_TLS_CLIENT_CERT_PATH="+c.ClientCert.CertFile, "TEMPORAL_TLS_CLIENT_KEY_PATH="+c.ClientCert.KeyFile,
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH="+c.CAFile,
	)
	f := &productionFleet{t: t, temporal: c, base: e, logs: t.TempDir()}
	// A worker refuses a namespace without kumo's search attributes: setup
	// first, as an operator does, then again (it is idempotent).
	for i := range 2 {
		r := e.run("temporal", "setup", "--retention", "24h")
		if r.code != 0 || !strings.Contains(r.stdout, "namespace "+productionNamespace+" keeps closed runs for 24h0m0s") ||
			!strings.Contains(r.stdout, "search attribute KumoProject (Keyword) is registered") {
			t.Fatalf("kumo temporal setup (run %d): %s", i+1, r)
		}
	}
	f.workers, f.exited = make([]*exec.Cmd, 2), make([]chan struct{}, 2)
	for i := range f.workers {
		f.startWorker(i)
	}
	t.Cleanup(func() {
		for i := range f.workers {
			f.killWorker(i)
		}
	})
	return f
}

// startWorker starts worker i (0 or 1), its output appended to its log, and
// waits until it polls.
func (f *productionFleet) startWorker(i int) {
	f.t.Helper()
	log := filepath.Join(f.logs, fmt.Sprintf("worker-%d.log", i+1))
	before := fileLen(log)
	out, err := os.OpenFile(log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	cmd := f.base.commandNoCluster(context.Background(), "--kubeconfig", f.base.cluster.Kubeconfig, "worker")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(done)
	}()
	f.mu.Lock()
	f.workers[i], f.exited[i] = cmd, done
	f.mu.Unlock()
	waitFor(f.t, fmt.Sprintf("worker %d to poll", i+1), 2*time.Minute, func() bool {
		select {
		case <-done:
			b, _ := os.ReadFile(log)
			f.t.Fatalf("worker %d exited while starting:\n%s", i+1, b[before:])
		default:
		}
		b, _ := os.ReadFile(log)
		return int64(len(b)) > before && strings.Contains(string(b[before:]), "kumo worker polling")
	})
}

func fileLen(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// killWorker sends SIGKILL to worker i and waits until it is gone.
func (f *productionFleet) killWorker(i int) {
	f.mu.Lock()
	cmd, done := f.workers[i], f.exited[i]
	f.mu.Unlock()
	if cmd == nil {
		return
	}
	kill(f.t, cmd.Process)
	<-done
}

// workerExited names a worker that ended without being killed.
func (f *productionFleet) workerExited() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i, done := range f.exited {
		select {
		case <-done:
			out = append(out, fmt.Sprintf("worker %d (exit %d, see %s)", i+1, f.workers[i].ProcessState.ExitCode(), filepath.Join(f.logs, fmt.Sprintf("worker-%d.log", i+1))))
		default:
		}
	}
	return out
}

// user is a kumo user of the fleet: their own home, project and Kubernetes
// namespace, the fleet's Temporal, codec key and S3 backend.
func (f *productionFleet) user() *env {
	e := newEnv(f.t)
	e.flags = append([]string(nil), f.base.flags...)
	e.environ = append([]string(nil), f.base.environ...)
	return e
}

// TestProductionTemporalApply: on temporal-server's services over PostgreSQL
// with TLS, set up by kumo temporal setup, two kumo workers with releases in
// S3 run an apply and a re-apply of a changed spec; each release is final and
// records every ConfigMap as it is live.
func TestProductionTemporalApply(t *testing.T) {
	if testing.Short() {
		t.Skip("starts temporal-server's four services, PostgreSQL, S3 and kumo workers")
	}
	f := startProductionFleet(t)
	e := f.user()
	const n = 200
	spec := e.writeSpec("spec.yaml", manyConfigMapsInNamespace(e.ns, n, "1"))
	start := time.Now()
	e.ok("apply", "--yes", "-f", spec)
	t.Logf("apply of %d ConfigMaps in %s", n, time.Since(start).Round(time.Millisecond))
	if v := productionViolations(e, n, 1, "1"); len(v) > 0 {
		t.Fatalf("after the apply:\n%s", strings.Join(v, "\n"))
	}
	spec = e.writeSpec("spec2.yaml", manyConfigMapsInNamespace(e.ns, n, "2"))
	start = time.Now()
	e.ok("apply", "--yes", "-f", spec)
	t.Logf("apply changing every ConfigMap in %s", time.Since(start).Round(time.Millisecond))
	if v := productionViolations(e, n, 2, "2"); len(v) > 0 {
		t.Fatalf("after the second apply:\n%s", strings.Join(v, "\n"))
	}
	// The runs are listed through SQL visibility, by kumo's search attributes.
	r := e.ok("run", "list")
	if strings.Count(r.stdout, "apply") < 2 {
		t.Errorf("kumo run list on SQL visibility lacks the two applies:\n%s", r.stdout)
	}
	if ex := append(f.temporal.Exited(), f.workerExited()...); len(ex) > 0 {
		t.Errorf("exited by themselves: %v", ex)
	}
}

// manyConfigMapsInNamespace: a Namespace and n ConfigMaps in it, each holding
// version and depending on the Namespace only, so a run applies them in
// parallel batches.
func manyConfigMapsInNamespace(ns string, n int, version string) string {
	return configMapsAfter(ns, n, version, func(int) bool { return false })
}

// configMapsAfter is manyConfigMapsInNamespace where ConfigMap i also
// depends on ConfigMap i-1 when after(i): chains give a run depth, so it
// lasts long enough to be interrupted.
func configMapsAfter(ns string, n int, version string, after func(int) bool) string {
	var b strings.Builder
	b.WriteString("resources:\n" + namespace(ns))
	for i := range n {
		deps := "v1:Namespace:" + ns
		if i > 0 && after(i) {
			deps += fmt.Sprintf(", v1:ConfigMap:%s:cm-%04d", ns, i-1)
		}
		fmt.Fprintf(&b, `- id: v1:ConfigMap:%[1]s:cm-%04[2]d
  type: Kubernetes
  dependsOn: [%[4]s]
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: cm-%04[2]d, namespace: %[1]s}
    data: {version: "%[3]s"}
`, ns, i, version, deps)
	}
	return b.String()
}

// productionViolations checks what must hold after the runs of a user have
// ended: revisions 1..revisions, each final, the last succeeded; its state
// records the Namespace and n ConfigMaps, each live as recorded (same
// resourceVersion) holding version; no other ConfigMap is live.
func productionViolations(e *env, n, revisions int, version string) []string {
	var v []string
	r := e.run("release", "list", "-o", "json")
	if r.code != 0 {
		return []string{"release list: " + r.String()}
	}
	rows := e.releases()
	if len(rows) != revisions {
		v = append(v, fmt.Sprintf("%d releases, want %d: %+v", len(rows), revisions, rows))
	}
	for i, row := range rows {
		if row.Revision != i+1 {
			v = append(v, fmt.Sprintf("revisions are not 1..%d: %+v", len(rows), rows))
			break
		}
		if row.Phase != "succeeded" && row.Phase != "failed" {
			v = append(v, fmt.Sprintf("revision %d is %s, not final", row.Revision, row.Phase))
		}
	}
	rel := e.release(0)
	if rel["phase"] != "succeeded" {
		return append(v, fmt.Sprintf("revision %v is %v: %v", rel["revision"], rel["phase"], rel["error"]))
	}
	state := stateVersions(rel)
	if len(state) != n+1 {
		v = append(v, fmt.Sprintf("revision %v records %d resources, want %d", rel["revision"], len(state), n+1))
	}
	data := map[string]any{}
	if s, ok := rel["state"].(map[string]any); ok {
		rs, _ := s["resources"].([]any)
		for _, x := range rs {
			res := x.(map[string]any)
			attrs, _ := res["attributes"].(map[string]any)
			data[res["id"].(string)] = attrs["data"]
		}
	}
	list, err := e.kube.CoreV1().ConfigMaps(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return append(v, "list ConfigMaps: "+err.Error())
	}
	live := 0
	for _, cm := range list.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		live++
		id := "v1:ConfigMap:" + e.ns + ":" + cm.Name
		rv, ok := state[id]
		switch {
		case !ok:
			v = append(v, id+" is live but not recorded")
		case rv != cm.ResourceVersion:
			v = append(v, fmt.Sprintf("%s: recorded resourceVersion %q, live %q", id, rv, cm.ResourceVersion))
		case cm.Data["version"] != version:
			v = append(v, fmt.Sprintf("%s: live version %q, want %q", id, cm.Data["version"], version))
		}
		if d, _ := data[id].(map[string]any); ok && d["version"] != version {
			v = append(v, fmt.Sprintf("%s: recorded version %v, want %q", id, d["version"], version))
		}
	}
	if live != n {
		v = append(v, fmt.Sprintf("%d ConfigMaps live, want %d", live, n))
	}
	if len(v) > 10 {
		v = append(v[:10], fmt.Sprintf("... and %d more", len(v)-10))
	}
	return v
}

// productionFaults are what a chaos trial does to the fleet mid-apply.
var productionFaults = []string{"history", "matching", "worker", "postgres"}

// TestProductionTemporalChaos: the chaos suite's invariants on the
// production shape. Each trial applies a spec over an earlier one (every
// ConfigMap changed, some added) with two workers, and mid-apply sends
// SIGKILL to the history service, the matching service or a worker, or
// restarts PostgreSQL, then starts what it stopped again; the apply must end
// by itself with a final, succeeded release recording every ConfigMap as it
// is live. An apply that has not ended stallAfter after its fault is a
// violation: the trial records what the run waits for (diagnoseStall) and the
// suite goes on with the next. KUMO_PRODUCTION_TRIALS trials (default: one
// per fault) run, the faults in turn (KUMO_PRODUCTION_FAULTS: a
// comma-separated subset); KUMO_PRODUCTION_SEED fixes the random choices;
// KUMO_PRODUCTION_ARTIFACTS names a directory that keeps the fleet's logs of
// a stalled trial.
func TestProductionTemporalChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("starts temporal-server's four services, PostgreSQL, S3 and kumo workers")
	}
	trials := len(productionFaults)
	if s := os.Getenv("KUMO_PRODUCTION_TRIALS"); s != "" {
		var err error
		if trials, err = strconv.Atoi(s); err != nil || trials < 1 {
			t.Fatalf("KUMO_PRODUCTION_TRIALS=%q: want a positive number", s)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("KUMO_PRODUCTION_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("KUMO_PRODUCTION_SEED=%q: want a number", s)
		}
	}
	faults := productionFaults
	if s := os.Getenv("KUMO_PRODUCTION_FAULTS"); s != "" {
		faults = nil
		for _, x := range strings.Split(s, ",") {
			if !slices.Contains(productionFaults, x) {
				t.Fatalf("KUMO_PRODUCTION_FAULTS=%q: %q is not one of %s", s, x, strings.Join(productionFaults, ", "))
			}
			faults = append(faults, x)
		}
	}
	t.Logf("%d trials of %s, KUMO_PRODUCTION_SEED=%d", trials, strings.Join(faults, ", "), seed)
	f := startProductionFleet(t)
	rng := rand.New(rand.NewPCG(seed, 0x70726f64))
	failed := 0
	start := time.Now()
	for i := range trials {
		fault := faults[i%len(faults)]
		v := f.trial(i+1, fault, rng)
		if len(v) > 0 {
			failed++
			t.Errorf("trial %d (%s): %d violations:\n  %s", i+1, fault, len(v), strings.Join(v, "\n  "))
		}
		if ex := append(f.temporal.Exited(), f.workerExited()...); len(ex) > 0 {
			t.Fatalf("after trial %d: exited by themselves: %v", i+1, ex)
		}
	}
	t.Logf("%d trials in %s, %d with violations", trials, time.Since(start).Round(time.Second), failed)
}

// trial runs one chaos trial and returns its violations.
func (f *productionFleet) trial(i int, fault string, rng *rand.Rand) []string {
	t := f.t
	e := f.user()
	n := 100 + rng.IntN(101)
	par := []int{1, 4, 10}[rng.IntN(3)]
	v1 := e.writeSpec("v1.yaml", manyConfigMapsInNamespace(e.ns, n, "1"))
	if r := e.run("apply", "--yes", "-f", v1); r.code != 0 {
		return []string{"the first apply (no fault) failed: " + r.String()}
	}
	n2 := n + n/5
	// Two of three ConfigMaps wait for the one before: chains the walk
	// takes one step at a time, beside batches of the others.
	chained := make([]bool, n2)
	for j := range chained {
		chained[j] = rng.IntN(3) > 0
	}
	v2 := e.writeSpec("v2.yaml", configMapsAfter(e.ns, n2, "2", func(j int) bool { return chained[j] }))
	killAt := 1 + rng.IntN(n2/2)
	restartAfter := time.Duration(rng.IntN(2000)) * time.Millisecond
	start := time.Now()
	cmd, done := e.startBackground(nil, "apply", "--yes", "--parallelism", strconv.Itoa(par), "-f", v2)
	changed := func() int {
		list, err := e.kube.CoreV1().ConfigMaps(e.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return 0
		}
		k := 0
		for _, cm := range list.Items {
			if cm.Data["version"] == "2" {
				k++
			}
		}
		return k
	}
	waitFor(t, fmt.Sprintf("trial %d: %d ConfigMaps changed", i, killAt), 3*time.Minute, func() bool { return changed() >= killAt })
	at, got := time.Since(start), changed()
	marks := f.markLogs()
	faultStart := time.Now()
	var err error
	switch fault {
	case "history", "matching":
		if err = f.temporal.Kill(fault); err == nil {
			time.Sleep(restartAfter)
			err = f.temporal.StartService(fault)
		}
	case "worker":
		w := rng.IntN(2)
		f.killWorker(w)
		time.Sleep(restartAfter)
		f.startWorker(w)
	case "postgres":
		// Down for as long as a restart takes; restartAfter is not used.
		err = f.temporal.RestartPostgres()
	}
	if err != nil {
		t.Fatalf("trial %d: %s: %v", i, fault, err)
	}
	// How long what the fault stopped was away: the pause, then the start
	// (for PostgreSQL, its immediate stop and start).
	down := time.Since(faultStart)
	var r result
	select {
	case r = <-done:
	case <-time.After(stallAfter):
		kill(t, cmd.Process)
		<-done
		diag := f.diagnoseStall(e, marks)
		f.keepLogs(i)
		t.Logf("trial %d: apply of %d over %d ConfigMaps, parallelism %d: %s at %s (%d changed); no end %s after it, now %d changed",
			i, n2, n, par, fault, at.Round(time.Millisecond), got, stallAfter, changed())
		return []string{fmt.Sprintf("the apply stalled: not ended %s after the fault (%d of %d ConfigMaps changed); diagnosis:\n%s", stallAfter, changed(), n2, diag)}
	}
	t.Logf("trial %d: apply of %d over %d ConfigMaps, parallelism %d: %s at %s (%d changed), back %s later; the apply ended in %s",
		i, n2, n, par, fault, at.Round(time.Millisecond), got, down.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	var v []string
	if r.code != 0 {
		v = append(v, "the apply under the fault failed: "+r.String())
	}
	if got >= n2 {
		v = append(v, fmt.Sprintf("the fault came after the last ConfigMap changed (%d of %d): the trial proves nothing", got, n2))
	}
	v = append(v, productionViolations(e, n2, 2, "2")...)
	took, err := f.awaitServing()
	if err != nil {
		return append(v, err.Error())
	}
	if took > time.Second {
		t.Logf("trial %d: the fleet served the namespace again %s after the apply ended", i, took.Round(time.Millisecond))
	}
	return v
}
