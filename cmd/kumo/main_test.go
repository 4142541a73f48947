package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/kumoproj/kumo/internal/keyring"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
)

// These tests run the real kumo binary against a real kube-apiserver (started by
// localclustertest) with the embedded Temporal server, as a user would. The
// cluster runs workloads (a simulated node), so applies that wait for
// Deployments to become available finish.
func TestMain(m *testing.M) {
	code := localclustertest.Run(m, localclustertest.Workloads)
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	os.Exit(code)
}

// builds holds the binaries the tests build (the CLI, generators) in one
// directory that TestMain removes: each is about 200 MB, and a directory left
// behind per test run fills a disk within days.
var builds struct {
	once  sync.Once
	dir   string
	err   error
	byPkg sync.Map // package -> *goBuild
}

type goBuild struct {
	once sync.Once
	path string
	err  error
}

// kumoPath builds the CLI once per test binary.
func kumoPath(t *testing.T) string {
	t.Helper()
	return buildGo(t, ".")
}

// buildGo builds a main package of this module once per test binary.
func buildGo(t *testing.T, pkg string) string {
	t.Helper()
	builds.once.Do(func() { builds.dir, builds.err = os.MkdirTemp("", "kumo-cmd-test-") })
	if builds.err != nil {
		t.Fatal(builds.err)
	}
	v, _ := builds.byPkg.LoadOrStore(pkg, &goBuild{})
	b := v.(*goBuild)
	b.once.Do(func() {
		name := filepath.Base(pkg)
		if pkg == "." {
			name = "kumo"
		}
		b.path = filepath.Join(builds.dir, name)
		if out, err := exec.Command("go", "build", "-o", b.path, pkg).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// fleetKeys holds the codec key file of each test that runs kumo against an
// existing Temporal cluster (*testing.T -> path; temporalServer makes one):
// every kumo process of the test gets it in KUMO_CODEC_KEY_FILE, as every
// machine of a fleet has it, unless the test's environ says otherwise.
var fleetKeys sync.Map

// fleetKeyFile is t's fleet codec key file, created on first use.
func fleetKeyFile(t *testing.T) string {
	t.Helper()
	if p, ok := fleetKeys.Load(t); ok {
		return p.(string)
	}
	p := filepath.Join(t.TempDir(), "fleet.keys")
	if _, err := keyring.AddKey(p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleetKeys.Delete(t) })
	actual, _ := fleetKeys.LoadOrStore(t, p)
	return actual.(string)
}

// env is one user's machine: a KUMO_HOME, a project, and the shared cluster.
type env struct {
	t       *testing.T
	cluster *localcluster.Cluster
	kube    *k8s.Clientset
	home    string
	project string
	ns      string
	flags   []string // extra global flags, e.g. --temporal-address
	environ []string // extra environment, e.g. AWS settings
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c := localclustertest.Start(t)
	kube, err := k8s.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ns := localclustertest.Namespace(t)
	return &env{t: t, cluster: c, kube: kube, home: t.TempDir(), project: ns, ns: ns}
}

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// command prepares `kumo <global flags> <args>` for this env.
func (e *env) command(ctx context.Context, args ...string) *exec.Cmd {
	return e.commandNoCluster(ctx, append([]string{"--kubeconfig", e.cluster.Kubeconfig}, args...)...)
}

// commandNoCluster is command for kumo commands that need no Kubernetes.
func (e *env) commandNoCluster(ctx context.Context, args ...string) *exec.Cmd {
	global := append([]string{"--home", e.home, "--project", e.project}, e.flags...)
	cmd := exec.CommandContext(ctx, kumoPath(e.t), append(global, args...)...)
	cmd.Env = append(os.Environ(), "KUMO_HOME="+e.home)
	if key, ok := fleetKeys.Load(e.t); ok {
		cmd.Env = append(cmd.Env, "KUMO_CODEC_KEY_FILE="+key.(string))
	}
	cmd.Env = append(cmd.Env, e.environ...)
	return cmd
}

func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.runInput("", args...)
}

func (e *env) runInput(stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := e.command(ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, strings.NewReader(stdin)
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		e.t.Fatalf("kumo %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// ok runs kumo and fails the test unless it exits 0.
func (e *env) ok(args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("kumo %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// fails runs kumo, expects a non-zero exit and stderr containing every want.
func (e *env) fails(args []string, want ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code == 0 {
		e.t.Fatalf("kumo %s succeeded, want failure: %s", strings.Join(args, " "), r)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			e.t.Errorf("kumo %s: stderr lacks %q: %s", strings.Join(args, " "), w, r)
		}
	}
	if strings.Contains(r.stderr, "goroutine ") {
		e.t.Errorf("stderr holds a Go stack trace: %s", r.stderr)
	}
	return r
}

func (e *env) writeSpec(name, yaml string) string {
	e.t.Helper()
	path := filepath.Join(e.t.TempDir(), name)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

type releaseJSON struct {
	Revision  int    `json:"revision"`
	Operation string `json:"operation"`
	Phase     string `json:"phase"`
	Resources int    `json:"resources"`
	Error     string `json:"error"`
}

func (e *env) releases() []releaseJSON {
	e.t.Helper()
	var rows []releaseJSON
	r := e.ok("release", "list", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		e.t.Fatalf("release list -o json: %v\n%s", err, r.stdout)
	}
	return rows
}

// release returns `release show -o json --reveal` of one revision (0:
// latest): the record as it is, sensitive values and terraform state included.
func (e *env) release(revision int) map[string]any {
	e.t.Helper()
	args := []string{"release", "show", "-o", "json", "--reveal"}
	if revision > 0 {
		args = append(args, "--revision", fmt.Sprint(revision))
	}
	var rel map[string]any
	r := e.ok(args...)
	if err := json.Unmarshal([]byte(r.stdout), &rel); err != nil {
		e.t.Fatalf("release show: %v\n%s", err, r.stdout)
	}
	return rel
}

type change struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	Fields []struct {
		Path   string `json:"path"`
		Before any    `json:"before"`
		After  any    `json:"after"`
	} `json:"fields"`
}

func (e *env) preview(spec string) map[string]change {
	e.t.Helper()
	r := e.ok("preview", "-f", spec, "-o", "json")
	var out struct {
		Changes []change `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		e.t.Fatalf("preview -o json: %v\n%s", err, r.stdout)
	}
	byID := map[string]change{}
	for _, c := range out.Changes {
		byID[c.ID] = c
	}
	return byID
}

// stateIDs lists the resource IDs a release recorded, with their resourceVersions.
func stateVersions(rel map[string]any) map[string]string {
	out := map[string]string{}
	state, _ := rel["state"].(map[string]any)
	resources, _ := state["resources"].([]any)
	for _, r := range resources {
		res := r.(map[string]any)
		attrs, _ := res["attributes"].(map[string]any)
		meta, _ := attrs["metadata"].(map[string]any)
		rv, _ := meta["resourceVersion"].(string)
		out[res["id"].(string)] = rv
	}
	return out
}

func (e *env) configMapNames() []string {
	e.t.Helper()
	list, err := e.kube.CoreV1().ConfigMaps(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			names = append(names, cm.Name)
		}
	}
	return names
}
