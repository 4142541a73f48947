// Package localcluster runs a real, minimal Kubernetes control plane on loopback:
// etcd, kube-apiserver and kube-controller-manager (namespace and garbage-collector
// controllers) as child processes, for integration tests (see localclustertest)
// and kumo's quick start (hack/cluster, `make cluster-up`).
//
// With Options.Workloads it also runs kube-scheduler, the controller manager's
// workload controllers and kwok with one simulated Node (NodeName): Deployments,
// StatefulSets, DaemonSets and Jobs get real Pods that are scheduled and become
// Running and Ready (or complete) without any container running. Without it
// there is no scheduler and no kubelet: pods never run.
//
// The apiserver serves https://127.0.0.1:<port> with a CA generated in Options.Dir,
// authenticates one bearer token (user kumo-admin, group system:masters) and
// authorizes everything (AlwaysAllow). Binaries come from hack/build-tools.sh,
// built on first use.
//
// Only Unix-like systems are supported.
package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kumoproj/kumo/internal/quietport"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Name is the kubeconfig cluster, context and user name of a local cluster.
const Name = "kumo-local"

// Options configure Start.
type Options struct {
	// Dir holds everything: etcd data, certificates, token file, logs, kubeconfig and
	// the state file (pids, ports). Required. Starting again over the same Dir reuses
	// its data and credentials.
	Dir string
	// BinDir holds the binaries; default DefaultBinDir(). Missing ones are built.
	BinDir string
	// Detach starts the processes in their own session so they outlive the caller
	// (hack/cluster up). Otherwise they are killed when the caller exits.
	Detach bool
	// StartTimeout bounds waiting for etcd and the apiserver to be ready; default 2m.
	StartTimeout time.Duration
	// UnsafeNoFsync runs etcd without fsync: faster, for throwaway test clusters.
	UnsafeNoFsync bool
	// Ports on 127.0.0.1; 0 picks a free port.
	EtcdPort, EtcdPeerPort, APIServerPort int
	// Workloads adds kube-scheduler, the workload controllers (deployment,
	// replicaset, statefulset, daemonset, job, cronjob, endpoints, endpointslice,
	// pod garbage collector) and kwok with one simulated Node, so that Pods run
	// and become Ready. Start then also waits for that Node to be Ready.
	Workloads bool
	// RBAC authorizes requests by RBAC instead of allowing everything; the
	// cluster's own token stays an admin (group system:masters). For tests of
	// what a service account may do.
	RBAC bool
}

// Cluster is a running (or, from Load, a recorded) local control plane.
type Cluster struct {
	Dir        string `json:"dir"`
	Kubeconfig string `json:"kubeconfig"` // context/cluster/user "kumo-local"
	Server     string `json:"server"`     // https://127.0.0.1:<port>
	Token      string `json:"-"`
	CAData     []byte `json:"-"` // PEM of the CA that signed the apiserver's certificate

	EtcdPort      int `json:"etcdPort"`
	EtcdPeerPort  int `json:"etcdPeerPort"`
	APIServerPort int `json:"apiServerPort"`
	// Workloads: started with Options.Workloads (Pods run on NodeName).
	Workloads bool `json:"workloads,omitempty"`

	procs []*process
}

const stateFile = "cluster.json"

type state struct {
	Cluster
	Processes []*process `json:"processes"`
}

// Start starts etcd, kube-apiserver and kube-controller-manager (with
// Options.Workloads also kube-scheduler and kwok) and returns when the
// apiserver's /readyz succeeds (and the simulated Node is Ready). On failure everything started is stopped and
// the error carries the tail of the failing component's log. ctx bounds the start
// only; the processes run until Stop (or, unless Detach, the caller's exit).
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("localcluster: Options.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	for _, d := range []string{dir, filepath.Join(dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	bins, err := EnsureBinaries(opts.BinDir)
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	creds, err := ensureCredentials(dir)
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	fixedPorts := opts.EtcdPort != 0 || opts.EtcdPeerPort != 0 || opts.APIServerPort != 0
	for attempt := 1; ; attempt++ {
		c, err := start(ctx, opts, bins, creds)
		if err == nil {
			return c, nil
		}
		// Free ports are picked by binding and closing; another process may take
		// one in between. Try again with new ones.
		if fixedPorts || attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			return nil, err
		}
	}
}

func start(ctx context.Context, opts Options, bins Binaries, creds *credentials) (_ *Cluster, err error) {
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	c := &Cluster{
		Dir:        opts.Dir,
		Kubeconfig: filepath.Join(opts.Dir, "kubeconfig"),
		Token:      creds.token,
		CAData:     creds.caPEM,
		Workloads:  opts.Workloads,
	}
	ports, err := freePorts(opts.EtcdPort, opts.EtcdPeerPort, opts.APIServerPort)
	if err != nil {
		return nil, err
	}
	c.EtcdPort, c.EtcdPeerPort, c.APIServerPort = ports[0], ports[1], ports[2]
	c.Server = "https://127.0.0.1:" + strconv.Itoa(c.APIServerPort)
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	logs := filepath.Join(opts.Dir, "logs")
	run := func(name, bin string, args []string) (*process, error) {
		p, err := startProcess(name, bin, args, filepath.Join(logs, name+".log"), opts.Detach)
		if err != nil {
			return nil, err
		}
		c.procs = append(c.procs, p)
		return p, c.writeState()
	}

	etcdURL := "http://127.0.0.1:" + strconv.Itoa(c.EtcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(c.EtcdPeerPort)
	etcdArgs := []string{
		"--name=default",
		"--data-dir=" + filepath.Join(opts.Dir, "etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		"--log-level=warn",
	}
	if opts.UnsafeNoFsync {
		etcdArgs = append(etcdArgs, "--unsafe-no-fsync")
	}
	etcd, err := run("etcd", bins.Etcd, etcdArgs)
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, etcd, http.DefaultClient, etcdURL+"/health", nil); err != nil {
		return nil, err
	}

	if err := c.writeKubeconfig(); err != nil {
		return nil, err
	}
	apiserver, err := run("kube-apiserver", bins.APIServer, []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.APIServerPort),
		"--cert-dir=" + filepath.Join(opts.Dir, "pki"),
		"--tls-cert-file=" + creds.certFile, "--tls-private-key-file=" + creds.keyFile,
		"--client-ca-file=" + creds.caFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + creds.saKeyFile,
		"--service-account-signing-key-file=" + creds.saKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=" + authorizationMode(opts.RBAC),
		"--token-auth-file=" + creds.tokenFile,
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false",
	})
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, apiserver, c.httpClient(), c.Server+"/readyz", c.authorize); err != nil {
		return nil, err
	}

	// The controller manager only has to run: it waits for the apiserver itself,
	// and nothing it does is needed before Start returns.
	if _, err := run("kube-controller-manager", bins.ControllerManager, []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--controllers=" + controllers(opts.Workloads),
		"--leader-elect=false",
		"--secure-port=0",
	}); err != nil {
		return nil, err
	}
	if opts.Workloads {
		if err := c.startWorkloads(ctx, bins, run); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func authorizationMode(rbac bool) string {
	if rbac {
		return "RBAC"
	}
	return "AlwaysAllow"
}

// freePorts returns the given ports, replacing each 0 by a free loopback port
// no outgoing connection takes before etcd or the apiserver listens on it
// (quietport).
func freePorts(want ...int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]int, len(want))
	for i, p := range want {
		if p != 0 {
			out[i] = p
			continue
		}
		l, err := quietport.Listen("127.0.0.1")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out[i] = l.Addr().(*net.TCPAddr).Port
	}
	return out, nil
}

// waitHTTP polls url until it answers 200, p exits, or ctx ends.
func waitHTTP(ctx context.Context, p *process, client *http.Client, url string, prepare func(*http.Request)) error {
	var last string
	for {
		if gone, err := p.exited(); gone {
			return fmt.Errorf("localcluster: %s exited while starting (%v); %s:\n%s", p.Name, err, p.Log, p.logTail())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if prepare != nil {
			prepare(req)
		}
		resp, err := client.Do(req)
		if err == nil {
			body := make([]byte, 512)
			n, _ := resp.Body.Read(body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body[:n])))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("localcluster: %s not ready at %s (%v; last answer: %s); %s:\n%s",
				p.Name, url, context.Cause(ctx), last, p.Log, p.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) authorize(r *http.Request) { r.Header.Set("Authorization", "Bearer "+c.Token) }

func (c *Cluster) httpClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CAData)
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
}

// Ready checks the apiserver's /readyz once.
func (c *Cluster) Ready(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Server+"/readyz", nil)
	if err != nil {
		return err
	}
	c.authorize(req)
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s/readyz: %s", c.Server, resp.Status)
	}
	return nil
}

// RESTConfig returns a client-go config for the cluster, with client-side rate
// limits high enough not to be the bottleneck.
func (c *Cluster) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            c.Server,
		BearerToken:     c.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData},
		QPS:             500,
		Burst:           1000,
	}
}

func (c *Cluster) writeKubeconfig() error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[Name] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: c.CAData}
	cfg.AuthInfos[Name] = &clientcmdapi.AuthInfo{Token: c.Token}
	cfg.Contexts[Name] = &clientcmdapi.Context{Cluster: Name, AuthInfo: Name, Namespace: "default"}
	cfg.CurrentContext = Name
	return clientcmd.WriteToFile(*cfg, c.Kubeconfig)
}

// Processes describes the child processes: name, pid, log file and whether it runs.
func (c *Cluster) Processes() []ProcessInfo {
	out := make([]ProcessInfo, 0, len(c.procs))
	for _, p := range c.procs {
		out = append(out, ProcessInfo{Name: p.Name, PID: p.PID, Log: p.Log, Running: p.alive()})
	}
	return out
}

// ProcessInfo describes one child process.
type ProcessInfo struct {
	Name    string
	PID     int
	Log     string
	Running bool
}

// Running reports whether all its processes run (three, five with Workloads).
func (c *Cluster) Running() bool {
	want := 3
	if c.Workloads {
		want = 5
	}
	if len(c.procs) != want {
		return false
	}
	for _, p := range c.procs {
		if !p.alive() {
			return false
		}
	}
	return true
}

// Stop stops the processes in reverse start order (kwok, scheduler, controller
// manager, apiserver, etcd: SIGTERM, then SIGKILL after a grace period) and
// waits for them to exit. Data stays in Dir.
func (c *Cluster) Stop() error {
	var errs []error
	for i := len(c.procs) - 1; i >= 0; i-- {
		if err := c.procs[i].stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		c.procs = nil
	}
	if err := c.writeState(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// RemoveData removes etcd's data from Dir after Stop, keeping the logs,
// certificates and kubeconfig: for a caller that keeps Dir so the logs can be
// read. etcd's data is nearly all of Dir's size (its WAL is preallocated at
// 64 MB), and a kept directory per failed run would otherwise fill a disk.
func (c *Cluster) RemoveData() error {
	if len(c.procs) > 0 {
		return errors.New("localcluster: RemoveData on a running cluster; Stop it first")
	}
	return os.RemoveAll(filepath.Join(c.Dir, "etcd"))
}

func (c *Cluster) writeState() error {
	b, err := json.MarshalIndent(state{Cluster: *c, Processes: c.procs}, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.Dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(c.Dir, stateFile))
}

// Load returns the cluster last started in dir, as recorded in its state file, so
// that another process can inspect or Stop it. Its processes may have died since:
// see Running and Ready. An error wrapping os.ErrNotExist means none was started.
func Load(dir string) (*Cluster, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	c := s.Cluster
	c.procs = s.Processes
	if creds, err := ensureCredentials(dir); err == nil {
		c.Token, c.CAData = creds.token, creds.caPEM
	}
	return &c, nil
}
