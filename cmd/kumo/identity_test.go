package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/internal/tlstest"
)

// strangerAttempt is a line of testdata/stranger's output.
type strangerAttempt struct {
	Via, Address, Op, Err string
	OK                    bool
}

// buildStranger builds testdata/stranger where another account can run it.
func buildStranger(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kumo-stranger-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "stranger")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/stranger").CombinedOutput(); err != nil {
		t.Fatalf("go build stranger: %v\n%s", err, out)
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runStranger runs the stranger with args, as nobody when asNobody (setpriv:
// another uid and gid, no groups, an empty environment), and returns its
// attempts.
func runStranger(t *testing.T, bin string, asNobody bool, args ...string) []strangerAttempt {
	t.Helper()
	var cmd *exec.Cmd
	if asNobody {
		cmd = exec.Command("setpriv", append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", "env", "-i", "HOME=/tmp", bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("stranger %v: %v\n%s", args, err, stderr)
	}
	var as []strangerAttempt
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var a strangerAttempt
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("stranger output %q: %v", sc.Text(), err)
		}
		as = append(as, a)
	}
	if len(as) == 0 {
		t.Fatalf("stranger %v tried nothing", args)
	}
	return as
}

// listeningPorts are the TCP ports process pid listens on, as 127.0.0.1:port
// (every kumo port listens on loopback).
func listeningPorts(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	seen := map[string]bool{}
	var ports []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			port, err := strconv.ParseUint(hexPort, 16, 16)
			if err != nil {
				t.Fatal(err)
			}
			addr := "127.0.0.1:" + strconv.FormatUint(port, 10)
			if !seen[addr] {
				seen[addr] = true
				ports = append(ports, addr)
			}
		}
	}
	if len(ports) == 0 {
		t.Fatalf("pid %d listens on no TCP port", pid)
	}
	return ports
}

// openToOthers lets other accounts traverse the directories down to the
// home, so that only the PKI's own modes keep them from its keys.
func openToOthers(t *testing.T, home string) {
	t.Helper()
	for d := home; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// checkLockedOut: every attempt of the stranger failed, none by an answer
// that means it got past authentication.
func checkLockedOut(t *testing.T, what string, as []strangerAttempt) {
	t.Helper()
	for _, a := range as {
		if a.OK {
			t.Errorf("%s: another account succeeded: %+v", what, a)
			continue
		}
		if strings.Contains(a.Err, "NotFound") || strings.Contains(a.Err, "not found") || strings.Contains(a.Err, "PermissionDenied") {
			t.Errorf("%s: another account got past authentication: %+v", what, a)
		}
	}
	t.Logf("%s: %d attempts of another account, all refused; e.g. %s %s %s: %s", what, len(as), as[len(as)-1].Via, as[len(as)-1].Address, as[len(as)-1].Op, as[len(as)-1].Err)
}

// TestAnotherAccountIsLockedOut: another local account (nobody, through
// setpriv) cannot list, start, signal, update, terminate or poll on a
// default kumo server nor on a one-shot command's embedded server, nor talk
// to Temporal's internal ports, nor read the home's keys; the owner can.
func TestAnotherAccountIsLockedOut(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("running a command as another account (setpriv) needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv")
	}
	bin := buildStranger(t)
	e := newEnv(t)

	srv := e.startServer()
	openToOthers(t, e.home)
	tlsDir := filepath.Join(e.home, pki.DirName)
	keys := strings.Join([]string{filepath.Join(tlsDir, "owner.pem"), filepath.Join(tlsDir, "ca-key.pem"), filepath.Join(tlsDir, "internode.pem"), filepath.Join(tlsDir, "ca.pem")}, ",")
	var grpcPorts []string
	for _, p := range listeningPorts(t, srv.cmd.Process.Pid) {
		if !strings.Contains(srv.info.UIURL, p) && !strings.Contains(srv.info.CodecURL, p) {
			grpcPorts = append(grpcPorts, p)
		}
	}
	if len(grpcPorts) < 4 {
		t.Fatalf("kumo server listens on %v: want the frontend, history, matching and worker", grpcPorts)
	}
	checkLockedOut(t, "kumo server", runStranger(t, bin, true, "-frontend", strings.Join(grpcPorts, ","), "-read", keys))

	// The owner's control: the same program with the owner's certificate gets in.
	p, err := pki.Open(e.home, pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	owner := p.OwnerCert()
	in := map[string]bool{}
	for _, a := range runStranger(t, bin, false, "-frontend", srv.info.Address, "-no-start", "-cert", owner.CertFile, "-key", owner.KeyFile, "-ca", p.CAFile()) {
		if a.OK || strings.Contains(a.Err, "NotFound") || strings.Contains(a.Err, "not found") {
			in[a.Op] = true
		} else {
			t.Errorf("owner refused: %+v", a)
		}
	}
	for _, op := range []string{"list", "signal", "update", "terminate", "poll", "system-info"} {
		if !in[op] {
			t.Errorf("owner's %s did not get in", op)
		}
	}

	// A one-shot command's embedded server, while the command waits for an
	// approval.
	if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	srv.wait()
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns))
	answer, answerWriter := io.Pipe()
	defer answerWriter.Close()
	cli, wait := e.background(answer, "apply", "-f", spec)
	waitFor(t, "the one-shot apply to await approval", time.Minute, func() bool {
		return strings.Contains(e.run("release", "list").stdout, "awaiting-approval")
	})
	checkLockedOut(t, "one-shot server", runStranger(t, bin, true, "-frontend", strings.Join(listeningPorts(t, cli.Process.Pid), ","), "-read", keys))
	answerWriter.Close()
	wait()
}

// TestSharedServer: kumo server on every interface needs the operator's
// certificate and a policy; with them, a client with a certificate of the
// operator's CA dialling another loopback address authenticates and gets
// what its role allows.
func TestSharedServer(t *testing.T) {
	t.Parallel()
	e := &env{t: t, home: t.TempDir(), project: "p"}
	_, portStr, _ := strings.Cut(freeAddress(t), ":")
	port, _ := strconv.Atoi(portStr)
	address := "0.0.0.0:" + strconv.Itoa(port)
	r := e.runNoCluster("server", "--address", address, "--headless")
	if r.code == 0 || !strings.Contains(r.stderr, "--address "+address+" listens beyond this machine: add --tls-cert, --tls-key and --tls-client-ca") {
		t.Fatalf("server on every interface without TLS: %s", r)
	}
	ca := tlstest.NewCA(t, "operator")
	srvPair, alice := ca.Issue(t, "frontend"), ca.Issue(t, "alice")
	tlsFlags := []string{"--tls-cert", srvPair.CertFile, "--tls-key", srvPair.KeyFile, "--tls-client-ca", ca.CertFile}
	r = e.runNoCluster(append([]string{"server", "--address", address, "--headless"}, tlsFlags...)...)
	if r.code == 0 || !strings.Contains(r.stderr, "nobody besides local:") || !strings.Contains(r.stderr, "--policy") {
		t.Fatalf("server on every interface without a policy: %s", r)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	r = e.runNoCluster("server", "--address", address, "--headless", "--tls-cert", missing, "--tls-key", srvPair.KeyFile, "--tls-client-ca", ca.CertFile)
	if r.code == 0 || !strings.Contains(r.stderr, missing) {
		t.Fatalf("server with a certificate file that does not exist: %s", r)
	}
	r = e.runNoCluster("server", "--tls-cert-path", srvPair.CertFile)
	if r.code == 0 || !strings.Contains(r.stderr, "does not use --tls-cert-path") {
		t.Fatalf("server with a client flag: %s", r)
	}

	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("grants:\n  - role: viewer\n    subjects: [alice]\n    scopes: [\"*/*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stop := e.serverRecorded(append([]string{"server", "--address", address, "--headless", "--policy", policy}, tlsFlags...)...)
	if want := "Temporal: " + address + " "; !strings.Contains(stdout.String(), want) {
		t.Errorf("banner lacks %q (the address bound):\n%s", want, stdout.String())
	}
	bin := buildStranger(t)
	in := map[string]string{}
	for _, a := range runStranger(t, bin, false, "-frontend", "127.0.0.2:"+strconv.Itoa(port), "-no-start",
		"-cert", alice.CertFile, "-key", alice.KeyFile, "-ca", ca.CertFile, "-server-name", "localhost") {
		in[a.Op] = a.Err
		if a.Op == "list" || a.Op == "system-info" {
			if !a.OK {
				t.Errorf("alice (viewer) through 127.0.0.2: %+v", a)
			}
		}
	}
	if want := "alice may not approve p"; !strings.Contains(in["signal"], "alice may not approve") {
		t.Errorf("alice's approval signal: %q, want a denial like %q", in["signal"], want)
	}
	if !strings.Contains(in["poll"], "alice may not work */*") {
		t.Errorf("alice's poll: %q", in["poll"])
	}
	// The frontend's decisions are in the home's audit log, with the subject.
	stop()
	out, err := exec.Command(kumoPath(t), "--home", e.home, "audit", "-o", "json").CombinedOutput()
	audit := string(out)
	if err != nil || !strings.Contains(audit, `"alice"`) || !strings.Contains(audit, "alice may not approve") {
		t.Errorf("the audit log lacks alice's denied approval: %s", audit)
	}
}

// runNoCluster runs a kumo command that needs no Kubernetes.
func (e *env) runNoCluster(args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := e.commandNoCluster(ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// serverRecorded starts `kumo <args>` (a kumo server), waits until it has
// recorded itself in server.json and printed its banner, and returns its
// output so far and to come, and what kills it (the test's end does, if
// nothing did before).
func (e *env) serverRecorded(args ...string) (*lockedBuffer, func()) {
	t := e.t
	t.Helper()
	cmd := e.commandNoCluster(context.Background(), args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { kill(t, cmd.Process); _ = cmd.Wait() }) }
	t.Cleanup(stop)
	waitFor(t, "kumo server to record itself and print its banner", time.Minute, func() bool {
		_, err := os.Stat(filepath.Join(e.home, "server.json"))
		return err == nil && strings.Contains(out.String(), "kumo commands on this home now run here")
	})
	return out, stop
}

// lockedBuffer is a process's output, read while the process writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
