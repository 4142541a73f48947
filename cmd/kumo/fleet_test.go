package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/quietport"
	"github.com/kumoproj/kumo/internal/s3test"
	"github.com/kumoproj/kumo/internal/tlstest"
	"github.com/kumoproj/kumo/server/embedded"
)

// TestWorkerMutualTLS: a Temporal frontend that requires mutual TLS; a kumo
// worker connects with TEMPORAL_TLS_* paths, the CLI with the same settings as
// data, and an apply through them succeeds. Wrong settings fail fast, each
// with one line.
func TestWorkerMutualTLS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Temporal, a cluster and kumo processes")
	}
	ca := tlstest.NewCA(t, "temporal")
	server, client := ca.Issue(t, "frontend"), ca.Issue(t, "kumo")
	// The certificate's subject works the runs and deploys them.
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("grants:\n  - role: worker\n    subjects: [kumo]\n    scopes: [\"*/*\"]\n  - role: deployer\n    subjects: [kumo]\n    scopes: [\"*/*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := embedded.Start(context.Background(), embedded.Options{
		Dir: t.TempDir(), TLS: &embedded.TLS{CertFile: server.CertFile, KeyFile: server.KeyFile, CAFile: ca.CertFile}, PolicyFile: policy,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })

	e := newEnv(t)
	fleetKeyFile(t) // its commands and workers share a codec key, as a fleet's do
	e.environ = []string{
		"TEMPORAL_ADDRESS=" + srv.Address(), "TEMPORAL_NAMESPACE=" + srv.Namespace(),
		"TEMPORAL_TLS_CLIENT_CERT_PATH=" + client.CertFile, "TEMPORAL_TLS_CLIENT_KEY_PATH=" + client.KeyFile,
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + ca.CertFile,
	}
	e.worker()
	// The CLI reads the same settings as data.
	e.environ = []string{
		"TEMPORAL_ADDRESS=" + srv.Address(), "TEMPORAL_NAMESPACE=" + srv.Namespace(),
		"TEMPORAL_TLS_CLIENT_CERT_DATA=" + read(t, client.CertFile), "TEMPORAL_TLS_CLIENT_KEY_DATA=" + read(t, client.KeyFile),
		"TEMPORAL_TLS_SERVER_CA_CERT_DATA=" + read(t, ca.CertFile),
	}
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+configMap(e.ns, "a", "dependsOn: [v1:Namespace:"+e.ns+"]"))
	e.ok("apply", "--yes", "-f", spec)
	if rel := e.release(0); rel["phase"] != "succeeded" {
		t.Fatalf("release: %v", rel)
	}

	other := tlstest.NewCA(t, "other")
	stranger := other.Issue(t, "stranger")
	paths := func(cert tlstest.Pair, caFile string) []string {
		return []string{
			"TEMPORAL_ADDRESS=" + srv.Address(), "TEMPORAL_NAMESPACE=" + srv.Namespace(),
			"TEMPORAL_TLS_CLIENT_CERT_PATH=" + cert.CertFile, "TEMPORAL_TLS_CLIENT_KEY_PATH=" + cert.KeyFile,
			"TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + caFile,
		}
	}
	for _, c := range []struct {
		name    string
		environ []string
		args    []string
		want    string
	}{
		{"wrong CA", paths(client, other.CertFile), nil, "not signed by the trusted CA"},
		{"certificate from another CA", paths(stranger, ca.CertFile), nil, "refused the client certificate"},
		{"no TLS", []string{"TEMPORAL_ADDRESS=" + srv.Address()}, nil, "probably requires TLS"},
		{"unknown namespace", paths(client, ca.CertFile), []string{"--temporal-namespace", "nope"}, `namespace "nope" does not exist`},
		{"nothing listening", []string{"TEMPORAL_ADDRESS=127.0.0.1:1"}, nil, "cannot reach Temporal at 127.0.0.1:1: connection refused"},
	} {
		e.environ = c.environ
		start := time.Now()
		r := e.run(append(c.args, "worker")...)
		took := time.Since(start)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || len(lines) != 1 {
			t.Errorf("%s: want one line with %q: %s", c.name, c.want, r)
		}
		t.Logf("%s: failed in %s: %s", c.name, took.Round(time.Millisecond), lines[0])
	}
}

func read(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWorkerSIGTERMMidApply: two workers serve an apply; SIGTERM to one makes
// it stop polling (its /readyz fails), finish what it runs, and exit 0 within
// its grace; the other worker finishes the run.
func TestWorkerSIGTERMMidApply(t *testing.T) {
	t.Parallel()
	// A chain this long runs as chain steps of up to 100 ConfigMaps
	// (chainFromStart): long enough that one step is well short of it.
	const n, chainStep = 250, 100
	e := newEnv(t)
	address := temporalServer(t)
	e.flags = address.flags()
	healthAddr := freeAddress(t)
	first, firstDone := e.background(nil, "worker", "--health-address", healthAddr, "--shutdown-grace", "30s", "--log-format", "json")
	waitFor(t, "the first worker to be ready", time.Minute, func() bool { return httpStatus("http://"+healthAddr+"/readyz") == 200 })
	metricsAddr := freeAddress(t)
	e.background(nil, "worker", "--metrics-address", metricsAddr)
	spec := e.writeSpec("chain.yaml", chainSpec(e.ns, n))
	_, wait := e.background(nil, "apply", "--yes", "--parallelism", "1", "-f", spec)

	waitFor(t, "the apply to get going", 2*time.Minute, func() bool { return len(e.configMapNames()) >= 10 })
	if err := first.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stoppedAt := len(e.configMapNames())
	r := firstDone()
	if r.code != 0 || !strings.Contains(r.stderr, `"msg":"stopped"`) {
		t.Fatalf("worker after SIGTERM: %s", r)
	}
	if stoppedAt >= n {
		t.Fatalf("the run finished before the worker was stopped")
	}
	if r := wait(); r.code != 0 {
		t.Fatalf("apply after one worker stopped: %s", r)
	}
	t.Logf("worker stopped after %d of %d ConfigMaps", stoppedAt, n)
	e.checkStateMatchesCluster(n)
	// The second worker finished the run: its metrics count the resources
	// it applied. The stopping worker finished the chain step it held (a
	// worker finishes the activities it was given, within its grace) and
	// took no other, so the second applied every ConfigMap left beyond that
	// one step.
	metrics := httpBody(t, "http://"+metricsAddr+"/metrics")
	applied := metricValue(metrics, "kumo_node_steps", map[string]string{"step": "apply", "result": "ok"})
	if left := n - stoppedAt; applied < float64(left-chainStep) || applied <= 0 {
		t.Fatalf("the second worker's metrics count %v applied resources, for the %d ConfigMaps left when the first stopped:\n%s", applied, left, metrics)
	}
	t.Logf("the second worker applied %v resources", applied)
}

func httpBody(t *testing.T, url string) string {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// freeAddress is a free loopback address for a server the test starts
// (quietport: no outgoing connection takes it meanwhile).
func freeAddress(t *testing.T) string {
	ports, err := quietport.Pick("127.0.0.1", 1)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
}

func httpStatus(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestTwoWorkersOneKilledMidApply: issue 16's fleet test. Two `kumo worker`
// processes against one Temporal, releases in S3: a 3,000-resource apply is
// served by both (each executed node steps, from its metrics); SIGKILL of one
// mid-apply, and the run still ends succeeded on the other, its release final
// and recording every ConfigMap as it is live.
func TestTwoWorkersOneKilledMidApply(t *testing.T) {
	t.Parallel()
	// Enough resources that the run outlasts the first batches by far: a
	// batch step applies up to 100 resources, ten batches at a time.
	const n = 3000
	srv := s3test.Start(t)
	e := s3Env(t, srv, srv.Bucket(t))
	e.flags = append(e.flags, temporalServer(t).flags()...)
	metrics := []string{freeAddress(t), freeAddress(t)}
	victim, _ := e.background(nil, "worker", "--metrics-address", metrics[0])
	e.background(nil, "worker", "--metrics-address", metrics[1])
	// Independent resources, 10 batches at a time: a chain would not do, as
	// the SDK hands an activity scheduled by a workflow task to the worker that
	// ran that task (eager dispatch) whenever it has a free slot.
	spec := e.writeSpec("many.yaml", manyConfigMaps(e.ns, n+1))
	_, wait := e.background(nil, "apply", "--yes", "-f", spec)

	waitFor(t, "both workers to apply resources", 3*time.Minute, func() bool {
		return applied(activityTypes(t, metrics[0])) && applied(activityTypes(t, metrics[1]))
	})
	killedAt := len(e.configMapNames())
	if killedAt >= n {
		t.Fatalf("the run finished before a worker was killed")
	}
	kill(t, victim.Process)
	if r := wait(); r.code != 0 {
		t.Fatalf("apply after one worker was killed: %s", r)
	}
	t.Logf("killed a worker after %d of %d ConfigMaps", killedAt, n)
	e.checkStateMatchesCluster(n)
}

// applied reports whether a worker's activity types include an apply step:
// of one resource, or of a batch.
func applied(types map[string]bool) bool {
	return types["ApplyResource"] || types["ApplyResources"]
}
