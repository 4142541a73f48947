// Command platform is `make bench-platform`: one `kumo server` carrying a
// platform's stacks at once. It starts a local cluster and a kumo server (the
// binary, as users run it), applies -stacks stacks of -resources ConfigMaps,
// gives each a drift schedule every -every, and then, for -duration, starts
// applies at -rate a second (each changes every object of a random stack; at
// most -inflight at once) while it samples the server's CPU and memory, the
// Temporal database and the backend. It reports schedule lateness (when
// Temporal started each check against when it was due), apply latency under
// load against the same apply on the idle server, and what grew.
//
// With -retention the server keeps kumo's own records as long as Temporal
// keeps closed runs, and keeps the newest -retain-releases revisions of each
// stack (default 10, as Helm's --history-max), so that over a long run the
// backend, like the Temporal database, reaches a plateau: each apply adds a
// revision (~1 KB) and the collection every -gc-every removes the oldest one
// beyond the limit, and what only it named after --gc-grace (1h).
//
// The applies arrive on their own clock (an open loop, as a platform's teams
// do), so latency under load is the server's, not the load generator's. With
// -rate 0 the bench instead keeps -inflight applies running back to back (a
// closed loop): a saturation run that reports the throughput the machine
// reaches; no server meets latency or CPU goals under it, as it asks for more
// work the moment any finishes.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/benchspec"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/runspec"
)

type config struct {
	stacks, resources, inflight, idleRuns int
	// rate of applies a second (arrivals at random, on average rate a
	// second); 0: inflight applies back to back.
	rate                    float64
	duration, every, sample time.Duration
	out                     string
	// cpuprofile: the server's CPU profile over its whole life
	// (KUMO_CPUPROFILE); heapprofile: its heap when it stops (KUMO_HEAPPROFILE).
	cpuprofile, heapprofile string
	// retention: the server's --retention ("": its default); with it, kumo's
	// own run logs and drift reports are kept as long, collected every
	// gcEvery: a month of records compressed into the run.
	retention string
	gcEvery   time.Duration
	// retainReleases: with retention, the server's --retain-releases.
	retainReleases int
}

func main() {
	var cfg config
	flag.IntVar(&cfg.stacks, "stacks", 1000, "stacks the server carries")
	flag.IntVar(&cfg.resources, "resources", 20, "ConfigMaps per stack (plus its Namespace)")
	flag.IntVar(&cfg.inflight, "inflight", 20, "most applies running at once during the load (with -rate 0: kept running back to back)")
	flag.Float64Var(&cfg.rate, "rate", 1, "applies started a second during the load, at random times (0: -inflight applies back to back, a saturation run)")
	flag.IntVar(&cfg.idleRuns, "idle-runs", 30, "applies timed on the idle server, before the load (the baseline of the latency goal)")
	flag.DurationVar(&cfg.duration, "duration", 30*time.Minute, "how long the load runs")
	flag.DurationVar(&cfg.every, "every", 5*time.Minute, "each stack's drift schedule interval")
	flag.DurationVar(&cfg.sample, "sample", 15*time.Second, "how often the server and its storage are sampled")
	flag.StringVar(&cfg.out, "out", "", "write the results as markdown to this file")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write the server's CPU profile (its whole life: setup, idle applies and the load) to this file")
	flag.StringVar(&cfg.retention, "retention", "", "kumo server --retention: how long Temporal keeps closed runs (at least 1h; with a run longer than it plus Temporal's 30 minutes of spread deletions, the database's plateau shows)")
	flag.DurationVar(&cfg.gcEvery, "gc-every", 10*time.Minute, "with -retention: kumo server --gc-every, how often kumo's expired run logs and drift reports (kept as long as -retention) are removed")
	flag.IntVar(&cfg.retainReleases, "retain-releases", 10, "with -retention: kumo server --retain-releases, the revisions of each stack kept, so the backend reaches a plateau too (0: every one)")
	flag.StringVar(&cfg.heapprofile, "heapprofile", "", "write the server's heap when it stops, after the load, to this file")
	flag.Parse()
	if cfg.gcEvery < time.Minute {
		fmt.Fprintf(os.Stderr, "bench-platform: -gc-every %s: want at least a minute (kumo server's limit)\n", cfg.gcEvery)
		os.Exit(2)
	}
	if err := client.ValidateReleaseRetention(cfg.retainReleases); err != nil {
		fmt.Fprintf(os.Stderr, "bench-platform: -retain-releases %d: %v\n", cfg.retainReleases, err)
		os.Exit(2)
	}
	if cfg.rate < 0 || cfg.inflight < 1 || cfg.stacks < 1 || cfg.resources < 1 {
		fmt.Fprintf(os.Stderr, "bench-platform: -rate %g, -inflight %d, -stacks %d, -resources %d: want a rate of 0 or more and at least 1 of the others\n",
			cfg.rate, cfg.inflight, cfg.stacks, cfg.resources)
		os.Exit(2)
	}
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench-platform:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) error {
	tmp, err := os.MkdirTemp("", "kumo-bench-platform-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logf("starting a local cluster")
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: tmp + "/cluster", UnsafeNoFsync: true})
	if err != nil {
		return err
	}
	defer cluster.Stop()
	logf("building kumo")
	bin := filepath.Join(tmp, "kumo")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/kumo").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/kumo: %v\n%s", err, out)
	}
	home := filepath.Join(tmp, "home")
	srv, err := startServer(ctx, bin, home, cfg)
	if err != nil {
		return err
	}
	defer srv.stop()
	c, err := client.Open(client.Options{Home: home})
	if err != nil {
		return err
	}
	defer c.Close()
	p := &platform{cfg: cfg, c: c, settings: runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig}, generation: make([]atomic.Int64, cfg.stacks)}
	rep := &report{cfg: cfg, started: time.Now()}

	logf("applying %d stacks of %d resources", cfg.stacks, cfg.resources)
	setup := time.Now()
	if err := p.forEach(ctx, cfg.inflight, func(i int) error { _, err := p.apply(ctx, i); return err }); err != nil {
		return err
	}
	rep.setup = time.Since(setup)
	logf("timing %d applies on the idle server", cfg.idleRuns)
	for k := range cfg.idleRuns {
		d, err := p.apply(ctx, k%cfg.stacks)
		if err != nil {
			return err
		}
		rep.idle = append(rep.idle, d)
	}
	logf("creating %d drift schedules every %s", cfg.stacks, cfg.every)
	if err := p.forEach(ctx, cfg.inflight, func(i int) error {
		_, err := c.CreateDriftSchedule(ctx, client.ScheduleRequest{
			DriftRequest: client.DriftRequest{Project: stackName(i), Workspace: "default", Settings: p.settings},
			Every:        cfg.every,
		})
		return err
	}); err != nil {
		return err
	}

	if cfg.rate > 0 {
		logf("load: %.2f applies a second (at most %d at once) for %s", cfg.rate, cfg.inflight, cfg.duration)
	} else {
		logf("load: %d applies back to back for %s", cfg.inflight, cfg.duration)
	}
	rep.loadStart = time.Now()
	loadCtx, stopLoad := context.WithTimeout(ctx, cfg.duration)
	defer stopLoad()
	samples := make(chan sample, 1024)
	var sampling sync.WaitGroup
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		srv.sampleEvery(loadCtx, cfg.sample, home, samples)
		close(samples)
	}()
	var mu sync.Mutex
	var loadErrs []error
	record := func(d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			rep.loaded = append(rep.loaded, d)
		} else {
			loadErrs = append(loadErrs, err)
		}
	}
	var workers sync.WaitGroup
	// An apply started within the load runs to its end, so the schedules are
	// read from a server that only checks drift.
	if cfg.rate > 0 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			rep.turnedAway = p.arrive(loadCtx, ctx, &workers, record)
		}()
	} else {
		for range cfg.inflight {
			workers.Add(1)
			go func() {
				defer workers.Done()
				for loadCtx.Err() == nil {
					record(p.apply(ctx, rand.IntN(cfg.stacks)))
				}
			}()
		}
	}
	for s := range samples {
		rep.samples = append(rep.samples, s)
		logf("%s", s.line())
	}
	rep.loadEnd = time.Now()
	workers.Wait()
	sampling.Wait()
	rep.loadErrors = loadErrs

	logf("reading %d schedules' recent checks", cfg.stacks)
	if err := p.forEach(ctx, readParallel, func(i int) error {
		s, err := describeSchedule(ctx, c, stackName(i))
		if err != nil {
			mu.Lock()
			defer mu.Unlock()
			rep.unread = append(rep.unread, err)
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		for _, r := range s.Recent {
			// Checks due during the load (of each schedule's last recentChecks).
			if !r.Scheduled.Before(rep.loadStart) && r.Scheduled.Before(rep.loadEnd) {
				rep.lateness = append(rep.lateness, r.Started.Sub(r.Scheduled))
			}
		}
		rep.paused += boolInt(s.Paused)
		return nil
	}); err != nil {
		return err
	}
	md := rep.markdown()
	fmt.Print(md)
	if cfg.out != "" {
		return os.WriteFile(cfg.out, []byte(md), 0o644)
	}
	return nil
}

// readParallel is how many schedules are described at once after the load:
// the server still runs their drift checks.
const readParallel = 4

// describeSchedule describes stack's drift schedule, trying again a few
// times when the busy server does not answer in time.
func describeSchedule(ctx context.Context, c *client.Client, stack string) (*client.DriftSchedule, error) {
	var err error
	for attempt := range 5 {
		var s *client.DriftSchedule
		if s, err = c.DescribeDriftSchedule(ctx, stack, "default"); err == nil {
			return s, nil
		}
		time.Sleep(time.Duration(attempt+1) * 2 * time.Second)
	}
	return nil, fmt.Errorf("describe the drift schedule of %s: %w", stack, err)
}

// platform is the stacks and how they are applied.
type platform struct {
	cfg      config
	c        *client.Client
	settings runspec.RuntimeSettings
	// generation of each stack's data: every apply after the first changes
	// every ConfigMap of its stack.
	generation []atomic.Int64
}

func stackName(i int) string { return fmt.Sprintf("plat-%04d", i) }

// apply applies stack i with the next generation of its data and waits for
// the run; two applies of one stack at once are one refused, and tried again.
func (p *platform) apply(ctx context.Context, i int) (time.Duration, error) {
	gen := p.generation[i].Add(1)
	spec := benchspec.ConfigMaps(stackName(i), p.cfg.resources, false)
	for k := 1; k < len(spec.Resources); k++ {
		spec.Resources[k].Attributes["data"] = map[string]any{"index": fmt.Sprint(k), "generation": fmt.Sprint(gen)}
	}
	start := time.Now()
	for {
		r, err := p.c.Apply(ctx, client.Request{Project: stackName(i), Workspace: "default", Spec: spec, AutoApprove: true, Settings: p.settings})
		if err != nil {
			if errors.Is(err, client.ErrBusy) && ctx.Err() == nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			return 0, fmt.Errorf("apply %s: %w", stackName(i), err)
		}
		res, err := r.Wait(ctx)
		if err != nil {
			return 0, fmt.Errorf("apply %s: %w", stackName(i), err)
		}
		if res.Phase != engine.PhaseSucceeded {
			return 0, fmt.Errorf("apply %s: phase %s: %s", stackName(i), res.Phase, res.Error)
		}
		return time.Since(start), nil
	}
}

// arrive starts applies of random stacks at random times, on average
// p.cfg.rate a second, until load ends; an apply that arrives while
// p.cfg.inflight run is turned away (counted, not queued: a queue in the
// bench would hide the server's latency). Each apply runs to its end under
// ctx and is recorded.
func (p *platform) arrive(load, ctx context.Context, running *sync.WaitGroup, record func(time.Duration, error)) (turnedAway int) {
	slots := make(chan struct{}, p.cfg.inflight)
	for {
		wait := time.Duration(rand.ExpFloat64() / p.cfg.rate * float64(time.Second))
		select {
		case <-load.Done():
			return turnedAway
		case <-time.After(wait):
		}
		select {
		case slots <- struct{}{}:
		default:
			turnedAway++
			continue
		}
		running.Add(1)
		go func() {
			defer running.Done()
			defer func() { <-slots }()
			record(p.apply(ctx, rand.IntN(p.cfg.stacks)))
		}()
	}
}

// forEach calls f for every stack, parallel at a time; the first error stops it.
func (p *platform) forEach(ctx context.Context, parallel int, f func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= p.cfg.stacks {
					return
				}
				if err := f(i); err != nil {
					cancel(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// server is a running `kumo server` process.
type server struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startServer(ctx context.Context, bin, home string, cfg config) (*server, error) {
	args := []string{"server", "--headless", "--address", "127.0.0.1:0"}
	if cfg.retention != "" {
		args = append(args, "--retention", cfg.retention, "--retain-run-logs", cfg.retention,
			"--retain-drift-reports", cfg.retention, "--gc-every", cfg.gcEvery.String(),
			"--retain-releases", strconv.Itoa(cfg.retainReleases))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUMO_HOME="+home)
	for env, path := range map[string]string{"KUMO_CPUPROFILE": cfg.cpuprofile, "KUMO_HEAPPROFILE": cfg.heapprofile} {
		if path == "" {
			continue
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		cmd.Env = append(cmd.Env, env+"="+abs)
	}
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "kumo commands on this home now run here") {
				close(ready)
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case <-ready:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("kumo server exited before it was ready: %v", cmd.ProcessState)
	case <-time.After(2 * time.Minute):
		s.stop()
		return nil, errors.New("kumo server was not ready within 2 minutes")
	}
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// sample is the server and its storage at one moment.
type sample struct {
	at time.Time
	// cpu is the server's CPU time (user + system) since it started.
	cpu time.Duration
	rss int64
	// db is the Temporal database's files (with its WAL), backend the home's
	// records (releases, state, specs, run logs, drift reports).
	db, backend int64
}

func (s sample) line() string {
	return fmt.Sprintf("cpu %s rss %s db %s backend %s", s.cpu.Round(time.Second), mib(s.rss), mib(s.db), mib(s.backend))
}

// sampleEvery sends a sample of the server every interval until ctx ends.
func (s *server) sampleEvery(ctx context.Context, interval time.Duration, home string, out chan<- sample) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if smp, err := s.sample(home); err == nil {
			out <- smp
		} else {
			logf("sample: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *server) sample(home string) (sample, error) {
	smp := sample{at: time.Now()}
	pid := s.cmd.Process.Pid
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return smp, err
	}
	// Fields after the command name (which may hold spaces, inside parentheses).
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	var utime, stime int64
	if len(fields) > 12 {
		fmt.Sscan(fields[11], &utime)
		fmt.Sscan(fields[12], &stime)
	}
	smp.cpu = time.Duration(utime+stime) * time.Second / clockTicks
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return smp, err
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			smp.rss = kb << 10
		}
	}
	if smp.db, err = dirSize(filepath.Join(home, "temporal"), func(name string) bool { return strings.HasPrefix(name, "temporal.db") }); err != nil {
		return smp, err
	}
	if smp.backend, err = dirSize(home, func(string) bool { return true }, "temporal", "tls"); err != nil {
		return smp, err
	}
	return smp, nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times (100 on Linux).
const clockTicks = 100

// dirSize adds up the sizes of the files under dir whose names keep says,
// skipping the top-level directories skip.
func dirSize(dir string, keep func(string) bool, skip ...string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if d.IsDir() {
			for _, s := range skip {
				if path == filepath.Join(dir, s) {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !keep(d.Name()) {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			total += fi.Size()
		}
		return nil
	})
	return total, err
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
