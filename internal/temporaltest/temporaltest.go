// Package temporaltest runs Temporal as production runs it, for tests:
// temporal-server (go.temporal.io/server's cmd/server, built and cached by
// hack/build-tools.sh at the version kumo's go.mod requires) with its
// frontend, history, matching and worker services as four separate
// processes on loopback, persistence and SQL visibility on a private
// PostgreSQL (internal/pgtest) whose schemas temporal-sql-tool creates and
// migrates, and mutual TLS on the frontend with certificates made for the
// test. A test can SIGKILL any one service and start it again, and restart
// PostgreSQL under it.
//
//	c := temporaltest.Start(t)
//	// c.Address, c.CAFile, c.ClientCert: what a kumo worker is given
//	c.Kill("history"); c.StartService(t, "history")
//	c.RestartPostgres(t)
//
// Tests using it are skipped with -short, and unless KUMO_PRODUCTION_TEMPORAL=1
// (make test-production-temporal sets it): they build temporal-server the
// first time and take minutes, more than make test's budget allows.
package temporaltest

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/internal/pgtest"
	"github.com/kumoproj/kumo/internal/quietport"
	"github.com/kumoproj/kumo/internal/tlstest"
)

// Version is the temporal-server built for the tests: go.temporal.io/server
// in kumo's go.mod (TestVersionMatchesGoMod keeps them in sync, and
// hack/build-tools.sh builds this version).
const Version = "v1.32.1"

// Services are the server's services, each run as its own process.
var Services = []string{"frontend", "history", "matching", "worker"}

// healthName is the gRPC health service each service reports as SERVING on
// its gRPC port once it has started (the worker service only after it has
// set up the system namespace, which a PostgreSQL restart must not
// interrupt).
var healthName = map[string]string{
	"frontend": "temporal.api.workflowservice.v1.WorkflowService",
	"history":  "temporal.api.workflowservice.v1.HistoryService",
	"matching": "temporal.api.workflowservice.v1.MatchingService",
	"worker":   "temporal.api.workflowservice.v1.WorkerService",
}

// Cluster is a running production-shaped Temporal.
type Cluster struct {
	// Address is the frontend's host:port; it requires mutual TLS.
	Address string
	// CAFile signs the frontend's certificate and the clients' it accepts.
	CAFile string
	// ClientCert is a client certificate (CommonName "kumo") the frontend accepts.
	ClientCert tlstest.Pair
	// PG is the PostgreSQL server holding the "temporal" and
	// "temporal_visibility" databases.
	PG *pgtest.Server

	dir    string
	bin    string
	config string
	ports  map[string][2]int // service -> gRPC, membership port
	env    []string

	mu    sync.Mutex
	procs map[string]*proc
}

type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// Binary returns the path of tool (temporal-server or temporal-sql-tool),
// building it with hack/build-tools.sh the first time.
func Binary(tool string) (string, error) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := os.Getenv("KUMO_TOOLS_BIN")
	if bin == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		bin = filepath.Join(home, ".cache", "kumo", "bin")
	}
	path := filepath.Join(bin, tool+"-"+Version)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	cmd := exec.Command(filepath.Join(root, "hack", "build-tools.sh"), tool)
	cmd.Env = append(os.Environ(), "KUMO_TOOLS_BIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("hack/build-tools.sh %s: %w\n%s", tool, err, out)
	}
	return path, nil
}

// Start starts PostgreSQL, creates the schemas, and starts the four services;
// it returns when every service serves. Everything stops when t ends.
func Start(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts temporal-server's services and PostgreSQL; skipped with -short")
	}
	if os.Getenv("KUMO_PRODUCTION_TEMPORAL") != "1" {
		t.Skip("production-shaped Temporal: run by make test-production-temporal (KUMO_PRODUCTION_TEMPORAL=1), not make test")
	}
	c, err := Launch(t.TempDir())
	if c != nil {
		t.Cleanup(c.Close)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Launch is Start for a caller without a test (the bench command): the
// services' files and logs go in dir, and the caller must Close the cluster,
// also after an error when it is not nil.
func Launch(dir string) (*Cluster, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	server, err := Binary("temporal-server")
	if err != nil {
		return nil, err
	}
	sqlTool, err := Binary("temporal-sql-tool")
	if err != nil {
		return nil, err
	}
	pg, err := pgtest.New()
	if err != nil {
		return nil, err
	}
	c := &Cluster{PG: pg, dir: dir, bin: server, procs: map[string]*proc{}, ports: map[string][2]int{}}
	c.env = append(os.Environ(), "KUMO_TEMPORAL_SQL_PASSWORD="+c.PG.Password)
	if err := c.createSchemas(sqlTool); err != nil {
		return c, err
	}
	ca, err := tlstest.NewCAIn(dir, "temporal")
	if err != nil {
		return c, err
	}
	c.CAFile = ca.CertFile
	frontendCert, err := ca.IssueFiles("frontend")
	if err != nil {
		return c, err
	}
	systemCert, err := ca.IssueFiles("temporal-system")
	if err != nil {
		return c, err
	}
	if c.ClientCert, err = ca.IssueFiles("kumo"); err != nil {
		return c, err
	}
	ports, err := quietport.Pick("127.0.0.1", 2*len(Services))
	if err != nil {
		return c, err
	}
	for i, s := range Services {
		c.ports[s] = [2]int{ports[2*i], ports[2*i+1]}
	}
	c.Address = net.JoinHostPort("127.0.0.1", strconv.Itoa(c.ports["frontend"][0]))
	dynamic := filepath.Join(dir, "dynamicconfig.yaml")
	if err := os.WriteFile(dynamic, []byte(dynamicConfig), 0o644); err != nil {
		return c, err
	}
	c.config = filepath.Join(dir, "temporal.yaml")
	if err := os.WriteFile(c.config, []byte(c.renderConfig(frontendCert, systemCert, dynamic)), 0o600); err != nil {
		return c, err
	}
	// History alone first: every service writes the cluster's metadata into
	// the new database at its first start, and services starting at once
	// race on that write and exit (a supervisor would restart them; the
	// test does not hide such an exit). The frontend and matching route to
	// history's shards anyway.
	if err := c.StartService("history"); err != nil {
		return c, err
	}
	for _, s := range []string{"matching", "frontend", "worker"} {
		if err := c.start(s); err != nil {
			return c, err
		}
	}
	for _, s := range Services {
		if err := c.waitReady(s, 2*time.Minute); err != nil {
			return c, err
		}
	}
	return c, nil
}

// createSchemas creates the persistence and visibility databases and brings
// their schemas to the newest version, as an operator does with
// temporal-sql-tool (postgres12 plugin, the schemas embedded in the tool).
func (c *Cluster) createSchemas(tool string) error {
	for _, d := range [][2]string{{"temporal", "postgresql/v12/temporal"}, {"temporal_visibility", "postgresql/v12/visibility"}} {
		db, schema := d[0], d[1]
		base := []string{"--plugin", "postgres12", "--ep", "127.0.0.1", "--port", strconv.Itoa(c.PG.Port), "--user", pgtest.User, "--db", db}
		for _, args := range [][]string{
			{"create-database"},
			{"setup-schema", "--version", "0.0"},
			{"update-schema", "--schema-name", schema},
		} {
			cmd := exec.Command(tool, append(base, args...)...)
			// The password through the environment, never a command line.
			cmd.Env = append(os.Environ(), "SQL_PASSWORD="+c.PG.Password)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("temporal-sql-tool %s on %s: %w\n%s", args[0], db, err, out)
			}
		}
	}
	return nil
}

// dynamicConfig is kumo's tuning of the history service's queue processors
// (as server/embedded sets them; see its tuning.go): the defaults poll each
// queue at most 20 times a second, which sets the pace of every step of a
// run on a cluster with few shards.
const dynamicConfig = `history.transferProcessorMaxPollRPS:
  - value: 2000
history.visibilityProcessorMaxPollRPS:
  - value: 2000
history.timerProcessorMaxPollRPS:
  - value: 2000
history.outboundProcessorMaxPollRPS:
  - value: 2000
history.timerProcessorMaxTimeShift:
  - value: 10ms
frontend.namespaceRPS.visibility:
  - value: 100
`

// renderConfig is the server's configuration. It is a template (the
// enable-template comment): the database password comes from the
// environment, so the file holds no secret.
func (c *Cluster) renderConfig(frontend, system tlstest.Pair, dynamic string) string {
	var b strings.Builder
	sql := func(db string, conns int) {
		fmt.Fprintf(&b, `      sql:
        pluginName: postgres12
        databaseName: %s
        connectAddr: "127.0.0.1:%d"
        connectProtocol: tcp
        user: %s
        password: {{ env "KUMO_TEMPORAL_SQL_PASSWORD" }}
        maxConns: %d
        maxIdleConns: %d
        maxConnLifetime: 1h
`, db, c.PG.Port, pgtest.User, conns, conns)
	}
	b.WriteString(`# enable-template
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: 4
  datastores:
    default:
`)
	sql("temporal", 20)
	b.WriteString("    visibility:\n")
	sql("temporal_visibility", 10)
	fmt.Fprintf(&b, `global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  tls:
    frontend:
      server:
        certFile: %[1]s
        keyFile: %[2]s
        requireClientAuth: true
        clientCaFiles: [%[3]s]
      client:
        serverName: 127.0.0.1
        rootCaFiles: [%[3]s]
    systemWorker:
      certFile: %[4]s
      keyFile: %[5]s
      client:
        serverName: 127.0.0.1
        rootCaFiles: [%[3]s]
services:
`, frontend.CertFile, frontend.KeyFile, c.CAFile, system.CertFile, system.KeyFile)
	for _, s := range Services {
		fmt.Fprintf(&b, "  %s:\n    rpc:\n      grpcPort: %d\n      membershipPort: %d\n      bindOnIP: 127.0.0.1\n", s, c.ports[s][0], c.ports[s][1])
		if s == "frontend" {
			b.WriteString("      httpPort: 0\n")
		}
	}
	fmt.Fprintf(&b, `clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: %[1]s
dcRedirectionPolicy:
  policy: noop
publicClient:
  hostPort: %[1]s
dynamicConfigClient:
  filepath: %[2]s
  pollInterval: 10s
`, c.Address, dynamic)
	return b.String()
}

// start starts service s in the background, its output appended to
// <dir>/<s>.log.
func (c *Cluster) start(s string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.procs[s]; p != nil && !p.exited() {
		return fmt.Errorf("temporaltest: %s is already running (pid %d)", s, p.cmd.Process.Pid)
	}
	log, err := os.OpenFile(c.LogFile(s), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "\n=== %s start %s\n", time.Now().Format(time.RFC3339Nano), s)
	cmd := exec.Command(c.bin, "--config-file", c.config, "--allow-no-auth", "start", "--service", s)
	cmd.Dir, cmd.Env = c.dir, c.env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("temporaltest: start %s: %w", s, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	c.procs[s] = p
	return nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// LogFile is where service s's output goes (every start appends to it).
func (c *Cluster) LogFile(s string) string { return filepath.Join(c.dir, s+".log") }

// Kill sends SIGKILL to service s and waits until it is gone.
func (c *Cluster) Kill(s string) error {
	c.mu.Lock()
	p := c.procs[s]
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("temporaltest: no service %q (one of %s)", s, strings.Join(Services, ", "))
	}
	if p.exited() {
		return fmt.Errorf("temporaltest: %s had already exited (see %s)", s, c.LogFile(s))
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	return nil
}

// StartService starts service s again (after Kill) and waits until it serves.
func (c *Cluster) StartService(s string) error {
	if err := c.start(s); err != nil {
		return err
	}
	return c.waitReady(s, 2*time.Minute)
}

// Exited names the services whose process has ended without Kill having
// been asked to end it: each is a server crash the test should report.
func (c *Cluster) Exited() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range Services {
		if p := c.procs[s]; p != nil && p.exited() {
			out = append(out, fmt.Sprintf("%s (exit %d), the end of its log:\n%s", s, p.cmd.ProcessState.ExitCode(), c.logTail(s)))
		}
	}
	return out
}

// RestartPostgres stops PostgreSQL at once (every connection cut, as in a
// crash) and starts it again on the same port and data; the services keep
// running and reconnect.
func (c *Cluster) RestartPostgres() error {
	return c.PG.Restart()
}

// Close stops the services (SIGTERM, then SIGKILL after 10 seconds) and
// PostgreSQL, and removes PostgreSQL's files.
func (c *Cluster) Close() {
	c.stopServices()
	c.PG.Stop()
}

func (c *Cluster) stopServices() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if !p.exited() {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, p := range c.procs {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// TLSConfig is a client's TLS configuration for the frontend.
func (c *Cluster) TLSConfig() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(c.ClientCert.CertFile, c.ClientCert.KeyFile)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}, nil
}

// waitReady waits until service s reports itself serving through gRPC
// health (the frontend over mutual TLS).
func (c *Cluster) waitReady(s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		c.mu.Lock()
		p := c.procs[s]
		c.mu.Unlock()
		if p.exited() {
			return fmt.Errorf("temporaltest: %s exited with %d while starting:\n%s", s, p.cmd.ProcessState.ExitCode(), c.logTail(s))
		}
		if last = c.check(s); last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("temporaltest: %s not ready after %s: %v\n%s", s, timeout, last, c.logTail(s))
}

func (c *Cluster) check(s string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	name := healthName[s]
	creds := insecure.NewCredentials()
	if s == "frontend" {
		cfg, err := c.TLSConfig()
		if err != nil {
			return err
		}
		creds = credentials.NewTLS(cfg)
	}
	conn, err := grpc.NewClient(net.JoinHostPort("127.0.0.1", strconv.Itoa(c.ports[s][0])), grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: name})
	if err != nil {
		return err
	}
	if resp.Status != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("%s is %s", s, resp.Status)
	}
	return nil
}

// logTail is the end of service s's log: its last 40 lines.
func (c *Cluster) logTail(s string) string {
	f, err := os.Open(c.LogFile(s))
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 40 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
