package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/server/embedded"
)

// chainSpec: a Namespace and n ConfigMaps, each depending on the one before, so a
// run goes one node at a time and can be interrupted in the middle.
func chainSpec(ns string, n int) string {
	var b strings.Builder
	b.WriteString("resources:\n" + namespace(ns))
	prev := "v1:Namespace:" + ns
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("cm-%03d", i)
		b.WriteString(configMap(ns, name, "dependsOn: ["+prev+"]"))
		prev = "v1:ConfigMap:" + ns + ":" + name
	}
	return b.String()
}

// testTemporal is a Temporal server in the test process, standing in for an
// existing cluster that kumo CLIs and workers connect to, as the owner of
// its home.
type testTemporal struct {
	address string
	srv     *embedded.Server
}

// temporalServer starts a testTemporal.
func temporalServer(t *testing.T) testTemporal {
	t.Helper()
	fleetKeyFile(t) // its commands and workers share a codec key, as a fleet's do
	srv, err := embedded.Start(context.Background(), embedded.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop temporal: %v", err)
		}
	})
	return testTemporal{address: srv.Address(), srv: srv}
}

// flags reach the server as its home's owner.
func (s testTemporal) flags() []string {
	owner := s.srv.PKI().OwnerCert()
	return []string{"--temporal-address", s.address, "--tls-cert-path", owner.CertFile, "--tls-key-path", owner.KeyFile, "--tls-ca-path", s.srv.PKI().CAFile()}
}

// dial connects an SDK client as the home's owner.
func (s testTemporal) dial(t *testing.T) sdkclient.Client {
	t.Helper()
	co, err := s.srv.ConnectionOptions()
	if err != nil {
		t.Fatal(err)
	}
	tc, err := sdkclient.Dial(sdkclient.Options{HostPort: s.address, ConnectionOptions: co, Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// background starts kumo without waiting; the returned func waits for it
// (three minutes at most: then the test fails).
func (e *env) background(stdin io.Reader, args ...string) (*exec.Cmd, func() result) {
	e.t.Helper()
	cmd, done := e.startBackground(stdin, args...)
	return cmd, func() result {
		select {
		case r := <-done:
			return r
		case <-time.After(3 * time.Minute):
			kill(e.t, cmd.Process)
			e.t.Fatalf("kumo %s did not finish within 3m: %s", strings.Join(args, " "), <-done)
			return result{}
		}
	}
}

// startBackground starts kumo without waiting; its result arrives on the
// channel once it exits. The process is killed when the test ends.
func (e *env) startBackground(stdin io.Reader, args ...string) (*exec.Cmd, <-chan result) {
	e.t.Helper()
	cmd := e.command(context.Background(), args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, stdin
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() {
		err := cmd.Wait()
		r := result{code: cmd.ProcessState.ExitCode()}
		if err != nil && r.code == 0 {
			r.code = -1
		}
		r.stdout, r.stderr = out.String(), errb.String()
		done <- r
	}()
	e.t.Cleanup(func() { kill(e.t, cmd.Process) })
	return cmd, done
}

func (e *env) worker() *exec.Cmd {
	e.t.Helper()
	cmd, _ := e.background(nil, "worker")
	return cmd
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkStateMatchesCluster: the latest release succeeded and records every
// ConfigMap of the chain exactly as it is live.
func (e *env) checkStateMatchesCluster(n int) {
	e.t.Helper()
	rel := e.release(0)
	if rel["phase"] != "succeeded" {
		e.t.Fatalf("release %v is %v: %v", rel["revision"], rel["phase"], rel["error"])
	}
	state := stateVersions(rel)
	if len(state) != n+1 {
		e.t.Errorf("state holds %d resources, want %d", len(state), n+1)
	}
	list, err := e.kube.CoreV1().ConfigMaps(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	live := 0
	for _, cm := range list.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		live++
		id := "v1:ConfigMap:" + e.ns + ":" + cm.Name
		if state[id] != cm.ResourceVersion {
			e.t.Errorf("%s: state resourceVersion %q, live %q", id, state[id], cm.ResourceVersion)
		}
	}
	if live != n {
		e.t.Errorf("%d ConfigMaps live, want %d", live, n)
	}
}

// TestSecondApplyIsRefusedWhileOneRuns: one apply per project+workspace at a time;
// another workspace is independent.
func TestSecondApplyIsRefusedWhileOneRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.flags = temporalServer(t).flags()
	e.worker()
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+configMap(e.ns, "a", "dependsOn: [v1:Namespace:"+e.ns+"]"))

	// The first apply waits at its confirmation prompt: it is running.
	answer, answerWriter := io.Pipe()
	defer func() {
		if err := answerWriter.Close(); err != nil {
			t.Error(err)
		}
	}()
	_, wait := e.background(answer, "apply", "-f", spec)
	waitFor(t, "the first apply to await approval", time.Minute, func() bool {
		return strings.Contains(e.run("release", "list").stdout, "awaiting-approval")
	})

	second := e.fails([]string{"apply", "--yes", "-f", spec}, "another run is in progress", "kumo/"+e.project+"/default", "kumo resume")
	rel := e.release(1)
	if runID, _ := rel["runID"].(string); runID == "" || !strings.Contains(second.stderr, runID) {
		t.Errorf("refusal does not name the running run %q: %s", runID, second.stderr)
	}

	other := *e
	other.ns = e.ns + "-b"
	other.flags = append(other.flags, "--workspace", "other")
	otherSpec := e.writeSpec("other.yaml", "resources:\n"+namespace(other.ns))
	other.ok("workspace", "create", "other", "--file", e.writeSpec("ws.yaml", "context: {}\n"))
	other.ok("apply", "--yes", "-f", otherSpec)

	fmt.Fprintln(answerWriter, "yes")
	if err := answerWriter.Close(); err != nil { // exec waits for stdin copying to end
		t.Fatal(err)
	}
	if r := wait(); r.code != 0 || !strings.Contains(r.stdout, "Do you want to apply these changes?") {
		t.Fatalf("first apply: %s", r)
	}
	if rows := e.releases(); len(rows) != 1 || rows[0].Phase != "succeeded" {
		t.Errorf("releases = %+v, want one succeeded", rows)
	}
}

// TestKilledWorkerRunResumesOnANewWorker: SIGKILL the only worker mid-DAG; a new
// worker on the same Temporal server finishes the run.
func TestKilledWorkerRunResumesOnANewWorker(t *testing.T) {
	t.Parallel()
	const n = 150
	e := newEnv(t)
	address := temporalServer(t)
	e.flags = address.flags()
	w := e.worker()
	spec := e.writeSpec("chain.yaml", chainSpec(e.ns, n))
	_, wait := e.background(nil, "apply", "--yes", "--parallelism", "1", "-f", spec)

	waitFor(t, "the apply to get going", 2*time.Minute, func() bool { return len(e.configMapNames()) >= 10 })
	if err := w.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := len(e.configMapNames())
	if killedAt >= n {
		t.Fatalf("the run finished before the worker was killed")
	}
	e.worker()
	if r := wait(); r.code != 0 {
		t.Fatalf("apply after the worker was replaced: %s", r)
	}
	t.Logf("worker killed after %d of %d ConfigMaps", killedAt, n)
	e.checkStateMatchesCluster(n)
	e.checkRunIsFindable(address, "apply", 1)
}

// checkRunIsFindable: runs are filterable by kumo's search attributes, as in the
// Temporal Web UI.
func (e *env) checkRunIsFindable(ts testTemporal, operation string, revision int) {
	e.t.Helper()
	tc := ts.dial(e.t)
	defer tc.Close()
	query := fmt.Sprintf("KumoProject = %q AND KumoWorkspace = 'default' AND KumoOperation = %q AND KumoRevision = %d", e.project, operation, revision)
	var found int
	waitFor(e.t, "the run in visibility", 30*time.Second, func() bool {
		resp, err := tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err != nil {
			e.t.Fatalf("list %s: %v", query, err)
		}
		found = len(resp.Executions)
		return found == 1
	})
}

// TestKilledCLIRunResumesWithKumoResume: the embedded case — the kumo process
// that holds the Temporal server and worker is killed mid-DAG; `kumo resume`
// finishes the run.
func TestKilledCLIRunResumesWithKumoResume(t *testing.T) {
	t.Parallel()
	const n = 150
	e := newEnv(t)
	spec := e.writeSpec("chain.yaml", chainSpec(e.ns, n))
	cli, wait := e.background(nil, "apply", "--yes", "--parallelism", "1", "-f", spec)

	waitFor(t, "the apply to get going", 2*time.Minute, func() bool { return len(e.configMapNames()) >= 10 })
	if err := cli.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wait()
	killedAt := len(e.configMapNames())
	if killedAt >= n {
		t.Fatalf("the run finished before kumo was killed")
	}
	e.fails([]string{"apply", "--yes", "-f", spec}, "kumo resume")
	r := e.ok("resume")
	if !strings.Contains(r.stdout, "Resuming apply") || !strings.Contains(r.stdout, "succeeded") {
		t.Errorf("resume output:\n%s", r.stdout)
	}
	t.Logf("kumo killed after %d of %d ConfigMaps", killedAt, n)
	e.checkStateMatchesCluster(n)
	if r := e.ok("resume"); !strings.Contains(r.stdout, "Nothing to resume") {
		t.Errorf("second resume: %s", r.stdout)
	}
}

// TestSecondKumoIsRefusedWhileOneApplies: with the embedded server, a second kumo
// cannot open the Temporal database; it says which run holds the workspace.
func TestSecondKumoIsRefusedWhileOneApplies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns))
	answer, answerWriter := io.Pipe()
	defer func() {
		if err := answerWriter.Close(); err != nil {
			t.Error(err)
		}
	}()
	_, wait := e.background(answer, "apply", "-f", spec)
	waitFor(t, "the first apply to await approval", time.Minute, func() bool {
		return strings.Contains(e.run("release", "list").stdout, "awaiting-approval")
	})
	runID, _ := e.release(1)["runID"].(string)
	e.fails([]string{"apply", "--yes", "-f", spec}, "another run is in progress", runID)
	// Any other command that needs Temporal says who holds the home and what
	// lets several run at once.
	busy := e.fails([]string{"resume"}, "another kumo command (pid ", "is using "+e.home, "kumo server")
	if strings.Contains(busy.stderr, "database is locked") {
		t.Errorf("the refusal is about a database, not a kumo command: %s", busy.stderr)
	}
	fmt.Fprintln(answerWriter, "no")
	if err := answerWriter.Close(); err != nil {
		t.Fatal(err)
	}
	if r := wait(); r.code == 0 || !strings.Contains(r.stderr, "not approved") {
		t.Errorf("declined apply: %s", r)
	}
	if rows := e.releases(); len(rows) != 1 || rows[0].Phase != "failed" {
		t.Errorf("releases = %+v, want one failed (declined)", rows)
	}
}

// TestUnlock: `kumo release unlock` refuses while the run lives, and fails the
// release once the run is gone (here: terminated by an operator).
func TestUnlock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	address := temporalServer(t)
	e.flags = address.flags()
	e.worker()
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns))
	answer, answerWriter := io.Pipe()
	defer func() {
		if err := answerWriter.Close(); err != nil {
			t.Error(err)
		}
	}()
	cli, wait := e.background(answer, "apply", "-f", spec)
	waitFor(t, "the apply to await approval", time.Minute, func() bool {
		return strings.Contains(e.run("release", "list").stdout, "awaiting-approval")
	})
	rel := e.release(1)
	runID, workflowID := rel["runID"].(string), rel["workflowID"].(string)
	e.fails([]string{"release", "unlock"}, "still running", runID)

	kill(t, cli.Process)
	if err := answerWriter.Close(); err != nil {
		t.Fatal(err)
	}
	wait()
	tc := address.dial(t)
	defer tc.Close()
	if err := tc.TerminateWorkflow(context.Background(), workflowID, runID, "test"); err != nil {
		t.Fatal(err)
	}
	e.ok("release", "unlock")
	if rel := e.release(1); rel["phase"] != "failed" || !strings.Contains(rel["error"].(string), "unlock") {
		t.Errorf("after unlock: phase %v error %v", rel["phase"], rel["error"])
	}
	e.fails([]string{"release", "unlock"}, "nothing to unlock")
	// The workspace is usable again.
	e.ok("apply", "--yes", "-f", spec)
}

// kill kills p unless it has already exited.
func kill(t testing.TB, p *os.Process) {
	t.Helper()
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill %d: %v", p.Pid, err)
	}
}
