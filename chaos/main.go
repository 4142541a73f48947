// Command chaos is kumo's crash suite (`make chaos`): it runs trials, each an
// apply, destroy, rollback or compensation (an apply with --rollback-on-failure
// of a spec with one failing ConfigMap) of 50–200 ConfigMaps on a local
// kube-apiserver, on `kumo server` with separate `kumo worker` processes or
// with the one-shot kumo and its embedded server, and sends SIGKILL to a
// worker, the server or the one-shot kumo at random moments (up to three
// times), starting again what it killed (`kumo resume` for the one-shot kumo).
//
// After each trial it checks that the run ended by itself (no `release unlock`),
// that every release is final and revisions go 1..n without gaps, one per run,
// that the operation ended as it would have without kills, and that the
// ConfigMaps live are exactly the ones the last release records, as recorded.
//
// It drives kumo only through its command line and checks through the backend
// and the cluster. CHAOS_TRIALS (default 100) trials run; trial i's seed is
// CHAOS_SEED+i, and CHAOS_SEED=<a trial's seed> CHAOS_TRIALS=1 runs that trial
// again. Each violation is printed with that seed; the exit status is 1 if
// there was any.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/internal/localcluster"
)

// environment is what the trials share: one cluster, the kumo binary, one
// kumo server home with its workers, and one home for the one-shot kumo.
type environment struct {
	dir          string
	kube         *k8s.Clientset
	kumo         *kumo
	fleet        *fleet
	embeddedHome string
	backends     map[string]backend.Backend
	keepLogs     bool // removed at the end only when every trial passed
}

func (e *environment) backend(home string) (backend.Backend, error) {
	if b, ok := e.backends[home]; ok {
		return b, nil
	}
	b, err := local.New(home)
	if err != nil {
		return nil, err
	}
	e.backends[home] = b
	return b, nil
}

func main() {
	trials, err := envInt("CHAOS_TRIALS", 100)
	if err != nil {
		fatal(err)
	}
	seed, err := envInt("CHAOS_SEED", int(time.Now().UnixNano()%1_000_000_000))
	if err != nil {
		fatal(err)
	}
	os.Exit(run(trials, uint64(seed)))
}

func envInt(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a number", name, v)
	}
	return n, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "chaos:", err)
	os.Exit(2)
}

func run(trials int, seed uint64) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env, cleanup, err := setup(ctx)
	if err != nil {
		cleanup()
		fatal(err)
	}
	defer cleanup()
	fmt.Printf("chaos: %d trials from seed %d (logs in %s)\n", trials, seed, env.dir)

	type failed struct {
		seed       uint64
		violations []string
	}
	var failures []failed
	kills := map[string]int{}
	start := time.Now()
	for i := range trials {
		if ctx.Err() != nil {
			break
		}
		p := newPlan(seed+uint64(i), env.fleet.names())
		fmt.Printf("trial %d/%d (seed %d): %s\n", i+1, trials, p.seed, p)
		t := &trial{plan: p, env: env, sent: map[string]int{}}
		if err := t.run(ctx); err != nil {
			t.violation("trial could not run: %v", err)
		}
		for k, n := range t.sent {
			kills[k] += n
		}
		if len(t.violations) > 0 {
			failures = append(failures, failed{p.seed, t.violations})
			fmt.Printf("    reproduce: CHAOS_SEED=%d CHAOS_TRIALS=1 make chaos\n", p.seed)
		} else {
			env.deleteNamespace(t.project)
		}
	}
	fmt.Printf("chaos: %d trials in %s, %d with violations; SIGKILLs: %d kumo server, %d kumo worker, %d one-shot kumo (%d more skipped: the run had ended)\n",
		trials, time.Since(start).Round(time.Second), len(failures), kills["server"], kills["worker"], kills["kumo"], kills["skipped"])
	for _, f := range failures {
		fmt.Printf("  seed %d:\n", f.seed)
		for _, v := range f.violations {
			fmt.Printf("    %s\n", v)
		}
	}
	if len(failures) > 0 || ctx.Err() != nil {
		fmt.Printf("chaos: logs kept in %s\n", env.dir)
		return 1
	}
	env.keepLogs = false
	return 0
}

// setup starts the cluster, builds kumo and starts the fleet; cleanup stops
// what was started and removes the directory unless keepLogs.
func setup(ctx context.Context) (*environment, func(), error) {
	dir, err := os.MkdirTemp("", "kumo-chaos-")
	if err != nil {
		return nil, func() {}, err
	}
	env := &environment{dir: dir, embeddedHome: filepath.Join(dir, "home-oneshot"), backends: map[string]backend.Backend{}, keepLogs: true}
	var cluster *localcluster.Cluster
	cleanup := func() {
		if env.fleet != nil {
			env.fleet.stop()
		}
		if cluster != nil {
			if err := cluster.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "chaos: stop cluster:", err)
			}
		}
		if !env.keepLogs {
			os.RemoveAll(dir)
			return
		}
		// Kept for its logs and releases; the binary and etcd's data are
		// most of its size.
		if err := os.Remove(filepath.Join(dir, "kumo")); err != nil && !os.IsNotExist(err) {
			fmt.Fprintln(os.Stderr, "chaos:", err)
		}
		if cluster != nil { // after a failed Stop, RemoveData refuses
			if err := cluster.RemoveData(); err != nil {
				fmt.Fprintln(os.Stderr, "chaos:", err)
			}
		}
	}
	root, err := localcluster.ModuleRoot()
	if err != nil {
		return nil, cleanup, err
	}
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, cleanup, err
	}
	bin := filepath.Join(dir, "kumo")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/kumo")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, cleanup, fmt.Errorf("build kumo: %v\n%s", err, out)
	}
	if cluster, err = localcluster.Start(ctx, localcluster.Options{Dir: filepath.Join(dir, "cluster"), UnsafeNoFsync: true}); err != nil {
		return nil, cleanup, err
	}
	if env.kube, err = k8s.NewForConfig(cluster.RESTConfig()); err != nil {
		return nil, cleanup, err
	}
	env.kumo = &kumo{bin: bin, kubeconfig: cluster.Kubeconfig, logs: logs}
	if env.fleet, err = newFleet(env.kumo, filepath.Join(dir, "home-server"), 2); err != nil {
		return nil, cleanup, err
	}
	return env, cleanup, nil
}

func (e *environment) deleteNamespace(name string) {
	if err := e.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: delete namespace %s: %v\n", name, err)
	}
}
