package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/server"
)

// kumoServer is a `kumo server` process on an env's home.
type kumoServer struct {
	cmd  *exec.Cmd
	info server.Info
	wait func() result
}

// startServer starts `kumo server` on free ports and returns once it has
// recorded itself in server.json.
func (e *env) startServer(args ...string) *kumoServer {
	e.t.Helper()
	kumoPath(e.t) // built before the clock starts
	start := time.Now()
	cmd, wait := e.background(nil, append([]string{"server", "--address", "127.0.0.1:0"}, args...)...)
	s := &kumoServer{cmd: cmd, wait: wait}
	waitFor(e.t, "kumo server to record itself in server.json", time.Minute, func() bool {
		data, err := os.ReadFile(filepath.Join(e.home, server.FileName))
		return err == nil && json.Unmarshal(data, &s.info) == nil && s.info.PID == cmd.Process.Pid
	})
	e.t.Logf("kumo server ready in %s (Temporal %s, UI %s)", time.Since(start).Round(time.Millisecond), s.info.Address, s.info.UIURL)
	return s
}

// ownerConnection is how the owner of home dials its server.
func ownerConnection(t *testing.T, home string) sdkclient.ConnectionOptions {
	t.Helper()
	p, err := pki.Open(home, pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.ClientTLS(p.OwnerCert(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sdkclient.ConnectionOptions{TLS: cfg}
}

// waitFinal polls `release list` until the latest release has a final phase.
func (e *env) waitFinal(timeout time.Duration) releaseJSON {
	e.t.Helper()
	var last releaseJSON
	waitFor(e.t, "the release to end", timeout, func() bool {
		rows := e.releases()
		if len(rows) == 0 {
			return false
		}
		last = rows[len(rows)-1]
		return last.Phase == "succeeded" || last.Phase == "failed"
	})
	return last
}

var startedRun = regexp.MustCompile(`Started (\w+) run (\S+) \(workflow (\S+)\)\.`)

// detach runs `kumo <args> --detach` and returns the run ID it printed.
func (e *env) detach(args ...string) (runID string, out result) {
	e.t.Helper()
	start := time.Now()
	r := e.ok(append(args, "--detach")...)
	e.t.Logf("kumo %s --detach returned in %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	m := startedRun.FindStringSubmatch(r.stdout)
	if m == nil {
		e.t.Fatalf("--detach did not print the run: %s", r)
	}
	return m[2], r
}

func manyConfigMaps(ns string, n int) string {
	var b strings.Builder
	b.WriteString("resources:\n" + namespace(ns))
	for i := 1; i < n; i++ {
		b.WriteString(configMap(ns, fmt.Sprintf("cm-%03d", i), "dependsOn: [v1:Namespace:"+ns+"]"))
	}
	return b.String()
}

// TestServerDetachedApply: with kumo server running, `apply --detach` returns
// at once with the run's ID and Web UI link; the run finishes in the server.
func TestServerDetachedApply(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.startServer()
	spec := e.writeSpec("spec.yaml", manyConfigMaps(e.ns, 20))
	runID, r := e.detach("apply", "--yes", "-f", spec)
	link := srv.info.RunURL("kumo/"+e.project+"/default", runID)
	if !strings.Contains(r.stdout, "Web UI: "+link+"\n") || !strings.Contains(link, "/workflows/kumo%2F"+e.project+"%2Fdefault/"+runID+"/history") {
		t.Errorf("--detach output lacks the run's UI link %s:\n%s", link, r.stdout)
	}
	if rel := e.waitFinal(2 * time.Minute); rel.Phase != "succeeded" || rel.Resources != 20 {
		t.Fatalf("detached apply ended %+v", rel)
	}
	if got, _ := e.release(0)["runID"].(string); got != runID {
		t.Errorf("release run %q, --detach printed %q", got, runID)
	}
	if n := len(e.configMapNames()); n != 19 {
		t.Errorf("%d ConfigMaps live, want 19", n)
	}
}

// TestDetachNeedsAServer: without kumo server a detached run would stall until
// the next kumo command; it is refused before it starts.
func TestDetachNeedsAServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns))
	e.fails([]string{"apply", "--yes", "--detach", "-f", spec}, "no kumo server is running on "+e.home, "kumo server --home")
	if rows := e.releases(); len(rows) != 0 {
		t.Errorf("a refused --detach recorded releases: %+v", rows)
	}
}

// TestServerManyCommandsAtOnce: with kumo server, commands on one home no
// longer exclude each other.
func TestServerManyCommandsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startServer()
	other := *e
	other.project, other.ns = e.project+"-b", e.ns+"-b"
	specA := e.writeSpec("a.yaml", manyConfigMaps(e.ns, 10))
	specB := e.writeSpec("b.yaml", manyConfigMaps(other.ns, 10))

	var wg sync.WaitGroup
	results := make([]result, 3)
	for i, f := range []func() result{
		func() result { return e.run("apply", "--yes", "-f", specA) },
		func() result { return other.run("apply", "--yes", "-f", specB) },
		func() result { return e.run("release", "list") },
	} {
		wg.Go(func() { results[i] = f() })
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("command %d: %s", i, r)
		}
	}
	for _, env := range []*env{e, &other} {
		if rows := env.releases(); len(rows) != 1 || rows[0].Phase != "succeeded" {
			t.Errorf("%s: releases %+v, want one succeeded", env.project, rows)
		}
	}
}

// TestServerKilledAndStoppedMidApply: kill -9 of the server mid-apply, then a
// new kumo server finishes the run by itself; a graceful stop (SIGTERM) exits
// 0, removes server.json, and the run again continues on the next start.
func TestServerKilledAndStoppedMidApply(t *testing.T) {
	t.Parallel()
	const n = 300
	e := newEnv(t)
	srv := e.startServer()
	spec := e.writeSpec("chain.yaml", chainSpec(e.ns, n))
	runID, _ := e.detach("apply", "--yes", "--parallelism", "1", "-f", spec)

	waitFor(t, "the apply to get going", 2*time.Minute, func() bool { return len(e.configMapNames()) >= 10 })
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.wait()
	killedAt := len(e.configMapNames())
	if killedAt >= n {
		t.Fatal("the run finished before the server was killed")
	}
	// server.json is left behind, stale: commands ignore it.
	if _, err := os.Stat(filepath.Join(e.home, server.FileName)); err != nil {
		t.Fatalf("server.json of the killed server: %v", err)
	}
	if rel := e.release(0); rel["phase"] != "applying" {
		t.Fatalf("after kill -9 the release is %v", rel["phase"])
	}

	restarted := time.Now()
	srv = e.startServer()
	waitFor(t, "the run to go on", 2*time.Minute, func() bool { return len(e.configMapNames()) >= killedAt+20 })
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := srv.wait(); r.code != 0 || !strings.Contains(r.stderr, "Stopping") {
		t.Fatalf("kumo server after SIGTERM: %s", r)
	}
	stoppedAt := len(e.configMapNames())
	if stoppedAt >= n {
		t.Fatal("the run finished before the server was stopped")
	}
	if _, err := os.Stat(filepath.Join(e.home, server.FileName)); !os.IsNotExist(err) {
		t.Errorf("server.json after a clean exit: %v", err)
	}

	e.startServer()
	if rel := e.waitFinal(3 * time.Minute); rel.Phase != "succeeded" {
		t.Fatalf("after restarts the release is %+v", rel)
	}
	t.Logf("killed at %d, stopped at %d of %d ConfigMaps; %s from the first restart to the end",
		killedAt, stoppedAt, n, time.Since(restarted).Round(time.Millisecond))
	if got, _ := e.release(0)["runID"].(string); got != runID {
		t.Errorf("release run %q, want the detached run %q", got, runID)
	}
	e.checkStateMatchesCluster(n)
}

// TestServerStartErrors: a taken address, a second server, a home that is not
// a directory: one line naming it, no stack trace.
func TestServerStartErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().String()
	oneLine := func(r result) {
		t.Helper()
		if lines := strings.Count(strings.TrimSpace(r.stderr), "\n") + 1; lines != 1 {
			t.Errorf("error is %d lines, want one:\n%s", lines, r.stderr)
		}
	}
	oneLine(e.fails([]string{"server", "--address", taken}, "frontend address "+taken+" is not available"))
	oneLine(e.fails([]string{"server", "--address", "127.0.0.1:0", "--ui-address", taken}, "web UI address "+taken+" is not available"))
	oneLine(e.fails([]string{"server", "--address", "localhost"}, `--address "localhost": want host:port`))

	file := filepath.Join(t.TempDir(), "home-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	notDir := *e
	notDir.home = file
	oneLine(notDir.fails([]string{"server", "--address", "127.0.0.1:0"}, file))

	srv := e.startServer()
	oneLine(e.fails([]string{"server", "--address", "127.0.0.1:0"}, fmt.Sprintf("a kumo server (pid %d) is already running on %s", srv.info.PID, e.home)))
}
