// Command bench measures kumo against the machine's floor: for each row (flat or
// chain ConfigMaps in one Namespace) it applies, re-applies and destroys the same
// objects twice on one local cluster — once by raw server-side apply from
// parallel goroutines with no client-side limiter (the floor), once through
// kumo on the embedded Temporal server — and prints kumo's times as ratios to
// the floor. It also runs kumo with the in-memory runtime to show the
// orchestration's own cost per resource, what each run leaves in Temporal's
// history and database and writes to the backend, the process's peak memory,
// and how long a drift check of 1,000 applied resources takes. `make bench`
// runs it and writes bench/results.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	sdklog "go.temporal.io/sdk/log"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/benchspec"
	"github.com/kumoproj/kumo/internal/benchstat"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/internal/memlimit"
	"github.com/kumoproj/kumo/runspec"
)

// smallCount is how many times rows of up to 200 resources run (-count),
// largeCount rows of up to 2,000 (-count-2000); larger rows run once.
var smallCount, largeCount int

// runsOf is how many times row r runs; its times are the medians. A run of
// 2,000 objects moves by a fifth from one run to the next, the floor's as
// much as kumo's: one run of each says little about their ratio.
func runsOf(r row) int {
	switch {
	case r.n <= 200:
		return max(smallCount, 1)
	case r.n <= 2000:
		return max(largeCount, 1)
	}
	return 1
}

var quiet = sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

type row struct {
	name  string
	n     int
	chain bool
	// drift: apply the ConfigMaps with kumo and time a drift check of them,
	// instead of apply, re-apply and destroy against the floor.
	drift bool
	// update: apply the ConfigMaps, then time an update of every one and a
	// rollback to revision 1 against the floor (bench/update.go).
	update bool
	// peers: the same five operations by the floor, kubectl, Helm and kumo
	// (bench/peers.go).
	peers bool
	// install: the realistic install, a chart, by the floor, Helm and kumo
	// (bench/install.go).
	install bool
}

var allRows = []row{
	{name: "flat-200", n: 200}, {name: "chain-200", n: 200, chain: true}, {name: "flat-2000", n: 2000},
	{name: "flat-10000", n: 10000}, {name: "flat-50000", n: 50000}, {name: "drift-1000", n: 1000, drift: true},
	{name: "drift-10000", n: 10000, drift: true},
	{name: "update-200", n: 200, update: true}, {name: "update-2000", n: 2000, update: true},
	{name: "peers-200", n: 200, peers: true}, {name: "peers-2000", n: 2000, peers: true},
	{name: "install", n: installApps, install: true},
	// Only with -rows: one history for a chain of 50,000 (a run's longest).
	{name: "chain-50000", n: 50000, chain: true},
}

func main() {
	out := flag.String("out", "", "write the results as markdown to this file")
	only := flag.String("rows", "", "comma-separated rows to run (default: flat-200,chain-200,flat-2000,flat-10000,drift-1000,drift-10000,update-200,update-2000,peers-2000; BENCH_QUICK=1: the 200 rows; BENCH_LARGE=1 adds flat-50000; chain-50000 only when named)")
	parallel := flag.Int("parallel", 10, "parallelism of kumo and of the floor")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the last row's kumo runs (apply, re-apply, destroy; floor and null runtime excluded) to this file")
	skipNull := flag.Bool("skip-null", false, "skip the null-runtime rows")
	memprofile := flag.String("memprofile", "", "keep in this file the heap profile of the moment the live heap was highest during the last row's kumo runs (floor and null runtime excluded)")
	temporal := flag.String("temporal", "embedded", "the Temporal kumo runs on: embedded (a server in the bench process per row, as kumo server runs) or production (temporal-server's four services as processes on PostgreSQL with TLS, started once; needs PostgreSQL and builds temporal-server the first time)")
	flag.StringVar(&timelineDir, "timeline", "", "write each kumo run's history as a timeline (event times, gaps, activities) to this directory, one file per row run and operation")
	flag.IntVar(&smallCount, "count", 3, "runs of each row of up to 200 resources, of which the median is reported")
	flag.IntVar(&largeCount, "count-2000", 3, "runs of each row of 201 to 2,000 resources, of which the median is reported (larger rows run once; the peers row runs the floor and kumo this often, kubectl and Helm once)")
	flag.Parse()
	memlimit.Set() // as the kumo binary does: the bench process is the kumo process it measures
	if *temporal != "embedded" && *temporal != "production" {
		fmt.Fprintf(os.Stderr, "bench: -temporal %q: want embedded or production\n", *temporal)
		os.Exit(2)
	}
	if err := run(*out, selectRows(*only), *parallel, *cpuprofile, *memprofile, *skipNull, *temporal == "production"); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func selectRows(only string) []row {
	want := map[string]bool{}
	switch {
	case only != "":
		for _, n := range strings.Split(only, ",") {
			want[n] = true
		}
	case os.Getenv("BENCH_QUICK") == "1":
		want = map[string]bool{"flat-200": true, "chain-200": true}
	default:
		want = map[string]bool{"flat-200": true, "chain-200": true, "flat-2000": true, "flat-10000": true, "flat-50000": os.Getenv("BENCH_LARGE") == "1", "drift-1000": true, "drift-10000": true, "update-200": true, "update-2000": true, "peers-2000": true, "install": true}
	}
	var rows []row
	for _, r := range allRows {
		if want[r.name] {
			rows = append(rows, r)
		}
	}
	return rows
}

func run(out string, rows []row, parallel int, cpuprofile, memprofile string, skipNull, prod bool) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "kumo-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: tmp + "/cluster", UnsafeNoFsync: true})
	if err != nil {
		return err
	}
	defer cluster.Stop()
	fl, err := newFloor(cluster.RESTConfig(), parallel)
	if err != nil {
		return err
	}
	if prod {
		fmt.Fprintln(os.Stderr, "starting the production-shaped Temporal")
		if production, err = startProduction(ctx, tmp+"/temporal"); err != nil {
			return err
		}
		defer production.Close()
	}
	var prof *os.File
	if cpuprofile != "" {
		if prof, err = os.Create(cpuprofile); err != nil {
			return err
		}
		defer prof.Close()
	}

	rep := &report{parallel: parallel, started: time.Now(), production: prod}
	var drifts, updates, peers, installs []row
	rows = slices.DeleteFunc(rows, func(r row) bool {
		switch {
		case r.install:
			installs = append(installs, r)
		case r.drift:
			drifts = append(drifts, r)
		case r.update:
			updates = append(updates, r)
		case r.peers:
			peers = append(peers, r)
		}
		return r.drift || r.update || r.peers || r.install
	})
	for i, r := range rows {
		count := runsOf(r)
		var runs []result
		for k := range count {
			name := fmt.Sprintf("%s-%d", r.name, k)
			fmt.Fprintf(os.Stderr, "%s: floor\n", name)
			res := result{row: r}
			spec := benchspec.ConfigMaps("floor-"+name, r.n, r.chain)
			if res.floor, err = timeFloor(ctx, fl, spec, r.chain); err != nil {
				return fmt.Errorf("%s floor: %w", name, err)
			}
			fmt.Fprintf(os.Stderr, "%s: kumo\n", name)
			settings := runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig}
			var rowProf profiles
			if i == len(rows)-1 && k == 0 {
				rowProf = profiles{prof, memprofile} // one profile: the largest row's (rows go by size)
			}
			if res.kumo, err = timeKumo(ctx, tmp+"/"+name, "kumo-"+name, r, false, settings, parallel, rowProf); err != nil {
				return fmt.Errorf("%s kumo: %w", name, err)
			}
			if !skipNull {
				fmt.Fprintf(os.Stderr, "%s: kumo, null runtime\n", name)
				if res.null, err = timeKumo(ctx, tmp+"/"+name+"-null", "null-"+name, r, true, runspec.RuntimeSettings{}, parallel, profiles{}); err != nil {
					return fmt.Errorf("%s kumo (null runtime): %w", name, err)
				}
			}
			fmt.Fprint(os.Stderr, res.lines())
			runs = append(runs, res)
		}
		rep.results = append(rep.results, median(runs))
	}
	for _, r := range updates {
		count := runsOf(r)
		fmt.Fprintf(os.Stderr, "%s: update and rollback, floor and kumo (%d runs)\n", r.name, count)
		u, err := timeUpdate(ctx, tmp, r, cluster, fl, parallel, count)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		fmt.Fprint(os.Stderr, u.lines())
		rep.updates = append(rep.updates, u)
	}
	for _, r := range peers {
		p, err := timePeers(ctx, tmp+"/"+r.name, r, cluster, fl, parallel, runsOf(r))
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		fmt.Fprint(os.Stderr, p.lines())
		rep.peers = append(rep.peers, p)
	}
	for _, r := range drifts {
		fmt.Fprintf(os.Stderr, "%s: kumo apply, drift check\n", r.name)
		d, err := timeDrift(ctx, tmp+"/"+r.name, "kumo-"+r.name, r, runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig}, parallel, cluster)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		fmt.Fprintf(os.Stderr, "  check %ss, requests: %s\n", secs(d.check), d.requests)
		rep.drift = append(rep.drift, d)
	}
	for _, r := range installs {
		in, err := timeInstall(ctx, tmp+"/"+r.name, parallel, runsOf(r))
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		fmt.Fprint(os.Stderr, in.lines())
		rep.installs = append(rep.installs, in)
	}
	rep.load = benchstat.LoadAverage()
	md := rep.markdown()
	fmt.Print(md)
	if out != "" {
		return os.WriteFile(out, []byte(md), 0o644)
	}
	return nil
}

// times of apply, re-apply and destroy.
type times struct {
	apply, reapply, destroy time.Duration
	nsFinalize              time.Duration // part of destroy: the Namespace's own finalization
}

// ownDestroy is the destroy without the Namespace's finalization.
func (t times) ownDestroy() time.Duration { return t.destroy - t.nsFinalize }

func timeFloor(ctx context.Context, fl *floor, spec *engine.Spec, chain bool) (times, error) {
	var t times
	start := time.Now()
	if err := fl.apply(ctx, spec, chain); err != nil {
		return t, err
	}
	t.apply = time.Since(start)
	start = time.Now()
	if err := fl.apply(ctx, spec, chain); err != nil {
		return t, err
	}
	t.reapply = time.Since(start)
	start = time.Now()
	fin, err := fl.destroy(ctx, spec, chain)
	t.destroy, t.nsFinalize = time.Since(start), fin
	return t, err
}

// kumoTimes adds what the runs left in Temporal and what they cost besides
// time.
type kumoTimes struct {
	times
	serverStart time.Duration
	hist        [3]history // apply, re-apply, destroy
	// dbGrowth: how much the embedded database's used bytes grew in each run.
	dbGrowth [3]int64
	// written: bytes handed to the backend in each run; state: the size of
	// the state the apply recorded.
	written [3]int64
	state   int64
	// revs: what each run's revision costs in storage, against Helm's.
	revs [3]revisionBytes
	// peakRSS: the process's peak resident memory over the server's start
	// and its runs (apply, re-apply, destroy), not over the bench's own
	// measurements between them.
	peakRSS int64
	// idleRSS: resident memory once the destroy ended, with the server still
	// up; returnedRSS: the same after the free heap went back to the OS, as
	// `kumo server` does after a large run (server/memory.go).
	idleRSS, returnedRSS int64
}

// profiles says which profiles a row's kumo runs take: a CPU profile into cpu
// (when not nil), the heap profile at the highest live heap into heap (when
// not empty).
type profiles struct {
	cpu  *os.File
	heap string
}

func timeKumo(ctx context.Context, home, project string, r row, null bool, settings runspec.RuntimeSettings, parallel int, prof profiles) (kumoTimes, error) {
	var t kumoTimes
	if err := resetPeakRSS(); err != nil {
		return t, err
	}
	k, err := startKumo(ctx, home, null)
	if err != nil {
		return t, err
	}
	defer k.close()
	t.serverStart = k.started
	spec := benchspec.ConfigMaps(project, r.n, r.chain)
	if prof.cpu != nil {
		if err := pprof.StartCPUProfile(prof.cpu); err != nil {
			return t, err
		}
		defer pprof.StopCPUProfile()
	}
	var heap *heapWatch
	if prof.heap != "" {
		heap = startHeapWatch(prof.heap)
		defer heap.close()
	}
	for i, d := range []*time.Duration{&t.apply, &t.reapply, &t.destroy} {
		if heap != nil {
			heap.phase.Store([]string{"apply", "re-apply", "destroy"}[i])
		}
		s := spec
		if i == 2 {
			s = nil
		}
		db0, w0, err := k.usage(ctx)
		if err != nil {
			return t, err
		}
		stored0, err := storedBytes(k.c.Backend(), home)
		if err != nil {
			return t, err
		}
		if i > 0 {
			// What the bench read to measure the run before (its release
			// decoded whole) is not kumo's: the garbage goes back to the OS,
			// as kumo server returns it after a large run.
			if err := resetPeakRSS(); err != nil {
				return t, err
			}
		}
		took, run, err := k.run(ctx, project, s, settings, parallel)
		if err != nil {
			return t, err
		}
		*d = took
		peak, err := peakRSS()
		if err != nil {
			return t, err
		}
		t.peakRSS = max(t.peakRSS, peak)
		db1, w1, err := k.usage(ctx)
		if err != nil {
			return t, err
		}
		t.dbGrowth[i], t.written[i] = db1-db0, w1-w0
		if t.revs[i], err = revisionCost(ctx, k.c.Backend(), home, project, i+1, s, stored0); err != nil {
			return t, err
		}
		if i == 0 {
			if t.state, err = stateSize(ctx, k.c.Backend(), project); err != nil {
				return t, err
			}
		}
		if t.hist[i], err = k.history(ctx, run); err != nil {
			return t, err
		}
		if err := k.writeTimeline(ctx, project+"-"+[]string{"apply", "re-apply", "destroy"}[i], run, took); err != nil {
			return t, err
		}
	}
	t.nsFinalize = t.hist[2].lastDelete
	if t.idleRSS, err = residentRSS(); err != nil {
		return t, err
	}
	debug.FreeOSMemory()
	if t.returnedRSS, err = residentRSS(); err != nil {
		return t, err
	}
	return t, nil
}
