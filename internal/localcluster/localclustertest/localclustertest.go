// Package localclustertest gives integration tests a real Kubernetes control plane
// (see localcluster). Tests are skipped with -short.
//
// A package whose TestMain calls Main shares one cluster among all its tests (much
// faster: one start per package); tests keep apart by using their own namespaces
// (see Namespace). Without Main, each Start call gets a private cluster that is
// stopped when the test ends.
//
//	func TestMain(m *testing.M) { localclustertest.Main(m) }
//
//	func TestX(t *testing.T) {
//		c := localclustertest.Start(t)
//		ns := localclustertest.Namespace(t)
//		...
//	}
package localclustertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/localcluster"
)

var shared struct {
	enabled bool // Main was called
	opts    []Option
	once    sync.Once
	dir     string
	c       *localcluster.Cluster
	err     error
}

// Option changes how a cluster is started.
type Option func(*localcluster.Options)

// Workloads starts the cluster with localcluster.Options.Workloads: Pods are
// scheduled onto a simulated Node and become Running and Ready.
func Workloads(o *localcluster.Options) { o.Workloads = true }

// RBAC starts the cluster with localcluster.Options.RBAC. Only for a private
// cluster (a test without Main).
func RBAC(o *localcluster.Options) { o.RBAC = true }

// Main runs the package's tests with one shared cluster (see Run) and exits
// with their result.
func Main(m *testing.M, opts ...Option) { os.Exit(Run(m, opts...)) }

// Run runs the package's tests with one shared cluster, started with opts on
// the first Start call and stopped after the last test, and returns m.Run's
// code: for a TestMain with its own cleanup after the tests. With -short no
// cluster is started. It builds missing binaries before the tests run, so a
// cold build does not count against the test binary's -timeout. The cluster's
// directory is removed when the tests pass; when they fail, its logs are kept
// (and named on stderr) but not etcd's data.
func Run(m *testing.M, opts ...Option) int {
	flag.Parse()
	shared.enabled = true
	shared.opts = opts
	if !testing.Short() {
		if _, err := localcluster.EnsureBinaries(""); err != nil {
			fmt.Fprintln(os.Stderr, "localclustertest:", err)
			return 1
		}
	}
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "localclustertest: stop:", err)
		}
	}
	switch {
	case shared.dir == "":
	case code == 0:
		os.RemoveAll(shared.dir)
	default:
		if shared.c != nil { // after a failed Stop, RemoveData refuses
			if err := shared.c.RemoveData(); err != nil {
				fmt.Fprintln(os.Stderr, "localclustertest:", err)
			}
		}
		fmt.Fprintln(os.Stderr, "localclustertest: cluster logs kept in", shared.dir)
	}
	return code
}

// Start returns a running cluster: the package's shared one when TestMain calls
// Main, else a private one started with opts and stopped at the end of the test.
// It skips the test with -short. With Main, opts only check that the shared
// cluster has what the test needs (Workloads); Main's options start it.
func Start(t testing.TB, opts ...Option) *localcluster.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a local Kubernetes control plane; skipped with -short")
	}
	if shared.enabled {
		shared.once.Do(func() {
			shared.dir, shared.err = os.MkdirTemp("", "kumo-localcluster-")
			if shared.err == nil {
				shared.c, shared.err = start(shared.dir, shared.opts)
			}
		})
		if shared.err != nil {
			t.Fatal(shared.err)
		}
		if want := options(opts); want.Workloads && !shared.c.Workloads {
			t.Fatal("this test needs a cluster with workloads: pass localclustertest.Workloads to localclustertest.Main")
		}
		return shared.c
	}
	c, err := start(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	return c
}

func options(opts []Option) localcluster.Options {
	var o localcluster.Options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

func start(dir string, opts []Option) (*localcluster.Cluster, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	begin := time.Now()
	o := options(opts)
	o.Dir, o.UnsafeNoFsync = dir, true
	c, err := localcluster.Start(ctx, o)
	if err == nil && testing.Verbose() {
		fmt.Fprintf(os.Stderr, "localclustertest: cluster at %s started in %v\n", c.Server, time.Since(begin).Round(time.Millisecond))
	}
	return c, err
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace returns a fresh namespace name for t (from the test's name plus a
// random suffix); it does not create it.
func Namespace(t testing.TB) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(name) > 50 {
		name = strings.TrimRight(name[:50], "-")
	}
	return name + "-" + hex.EncodeToString(b)
}
