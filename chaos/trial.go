package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// Operations a trial runs under kills. compensation is an apply with
// --rollback-on-failure of a spec with one ConfigMap that fails.
var operations = []string{"apply", "destroy", "rollback", "compensation"}

// plan is everything a trial's seed decides.
type plan struct {
	seed        uint64
	op          string
	n           int  // ConfigMaps in v1
	embedded    bool // one-shot kumo (kill: the kumo process; then kumo resume) instead of kumo server + workers
	parallelism int
	update      bool // apply: over an earlier apply of v1 (changes, deletes), not from nothing
	kills       []kill
}

// kill is one SIGKILL: at whichever comes first, the run having recorded
// entries resources or delay after the run started (or the last restart); the
// killed process is started again restartAfter later.
type kill struct {
	target       string // "server", "worker-N", or "kumo" (the one-shot CLI)
	entries      int
	delay        time.Duration
	restartAfter time.Duration
}

func newPlan(seed uint64, fleetNames []string) plan {
	rng := rand.New(rand.NewPCG(seed, 0x6b756d6f))
	p := plan{
		seed: seed, op: operations[rng.IntN(len(operations))], n: 50 + rng.IntN(151),
		embedded: rng.IntN(4) == 0, parallelism: []int{1, 2, 4, 10}[rng.IntN(4)], update: rng.IntN(2) == 0,
	}
	kills := 1
	switch r := rng.IntN(100); {
	case r >= 85:
		kills = 3
	case r >= 60:
		kills = 2
	}
	for range kills {
		target := "kumo"
		if !p.embedded {
			target = fleetNames[0] // the server a third of the time, else a worker
			if rng.IntN(3) > 0 {
				target = fleetNames[1+rng.IntN(len(fleetNames)-1)]
			}
		}
		p.kills = append(p.kills, kill{
			target: target, entries: rng.IntN(p.n + 1),
			delay:        time.Duration(rng.IntN(8000)) * time.Millisecond,
			restartAfter: time.Duration(rng.IntN(1500)) * time.Millisecond,
		})
	}
	return p
}

func (p plan) String() string {
	mode := "kumo server + workers"
	if p.embedded {
		mode = "one-shot kumo (embedded server)"
	}
	what := p.op
	if p.op == "apply" && p.update {
		what = "apply (update)"
	}
	return fmt.Sprintf("%s of %d ConfigMaps, %s, parallelism %d", what, p.n, mode, p.parallelism)
}

// trial is one plan carried out.
type trial struct {
	plan
	env        *environment
	home       string
	project    string
	dir        string
	specs      specs
	store      backend.Backend
	runs       int    // releases this trial's runs should have made
	runID      string // the run under kills
	violations []string
	start      time.Time
	sent       map[string]int // SIGKILLs sent, by what was killed ("worker" for any worker)
}

func (t *trial) logf(format string, args ...any) {
	fmt.Printf("    "+format+"\n", args...)
}

func (t *trial) violation(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	t.violations = append(t.violations, msg)
	fmt.Printf("    VIOLATION: %s\n", msg)
}

// endWithin bounds how long a run may take to end after the last restart. A
// resumed run goes on once the dead process's calls time out (seconds: a short
// call's timeout, or a heartbeat's); what is left of a 200-resource run at
// parallelism 1 takes well under a minute. A run stalled for minutes is a
// violation even if it ends later.
const endWithin = 3 * time.Minute

var startedRun = regexp.MustCompile(`Started \w+ run (\S+) \(workflow \S+\)\.`)

// run carries out the trial; violations are recorded in t.violations, and an
// error means the trial could not be carried out at all.
func (t *trial) run(ctx context.Context) error {
	t.project = fmt.Sprintf("chaos-%d", t.seed)
	t.dir = filepath.Join(t.env.dir, t.project)
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return err
	}
	t.home = t.env.fleet.home
	if t.embedded {
		t.home = t.env.embeddedHome
	}
	var err error
	if t.store, err = t.env.backend(t.home); err != nil {
		return err
	}
	if _, err := t.env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: t.project}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	t.specs = makeSpecs(rand.New(rand.NewPCG(t.seed, 0x73706563)), t.project, t.n)
	files := map[string]*engine.Spec{"v1.yaml": t.specs.v1, "v2.yaml": t.specs.v2, "broken.yaml": t.specs.broken}
	for name, s := range files {
		data, err := engine.MarshalSpec(s)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(t.dir, name), data, 0o644); err != nil {
			return err
		}
	}

	var args []string
	switch t.op {
	case "apply":
		if t.update {
			t.setup("apply", "--yes", "-f", t.file("v1.yaml"))
		}
		args = []string{"apply", "--yes", "-f", t.file("v2.yaml")}
	case "destroy":
		t.setup("apply", "--yes", "-f", t.file("v1.yaml"))
		args = []string{"destroy", "--yes"}
	case "rollback":
		t.setup("apply", "--yes", "-f", t.file("v1.yaml"))
		t.setup("apply", "--yes", "-f", t.file("v2.yaml"))
		args = []string{"rollback", "--revision", "1", "--yes"}
	case "compensation":
		t.setup("apply", "--yes", "-f", t.file("v1.yaml"))
		args = []string{"apply", "--yes", "--rollback-on-failure", "-f", t.file("broken.yaml")}
	}
	if len(t.violations) > 0 {
		return nil // a setup run failed: nothing to kill
	}
	args = append(args, "--parallelism", fmt.Sprint(t.parallelism))
	t.start = time.Now()
	if t.embedded {
		t.runEmbedded(args)
	} else {
		t.runOnFleet(args)
	}
	t.logf("ended in %s", time.Since(t.start).Round(10*time.Millisecond))
	t.check(ctx)
	return nil
}

func (t *trial) file(name string) string { return filepath.Join(t.dir, name) }

// setup runs kumo to its end with no kill; it must succeed.
func (t *trial) setup(args ...string) {
	t.runs++
	if r := t.env.kumo.run(t.home, t.project, 5*time.Minute, args...); r.code != 0 {
		t.violation("setup run kumo %s (no kill) failed: %s", strings.Join(args, " "), r)
	}
}

// runOnFleet starts the run detached in kumo server, kills fleet processes at
// the plan's points, and waits for the run to end by itself.
func (t *trial) runOnFleet(args []string) {
	f := t.env.fleet
	r := t.env.kumo.run(t.home, t.project, 2*time.Minute, append(args, "--detach")...)
	m := startedRun.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.violation("kumo %s --detach did not start a run: %s", strings.Join(args, " "), r)
		return
	}
	t.runs++
	t.runID = m[1]
	rel := t.waitRelease(time.Minute, nil)
	if rel == nil {
		return
	}
	t.killAll(rel, nil, func(k kill) (string, error) {
		p := f.proc(k.target)
		p.kill()
		time.Sleep(k.restartAfter)
		return k.target, f.restart(k.target)
	})
	if final := t.waitFinal(rel, endWithin); final == nil {
		return
	}
	// The run itself (not only its release) has ended.
	w := t.env.kumo.run(t.home, t.project, 2*time.Minute, "run", "wait", t.runID, "--timeout", "90s")
	if want := t.wantExit(); w.code != want {
		t.violation("kumo run wait %s: exit %d, want %d: %s", t.runID, w.code, want, w)
	}
	if err := f.check(); err != nil {
		t.violation("%v", err)
	}
}

// runEmbedded runs the one-shot kumo (its own embedded Temporal server and
// worker), kills it at the plan's points and follows the run with kumo resume
// after each kill.
func (t *trial) runEmbedded(args []string) {
	driver, err := t.env.kumo.start("kumo-"+t.project, t.home, t.project, args...)
	if err != nil {
		t.violation("start kumo: %v", err)
		return
	}
	defer func() { driver.kill() }()
	t.runs++
	rel := t.waitRelease(2*time.Minute, driver)
	if rel == nil {
		return
	}
	t.runID = rel.RunID
	resumes := 0
	t.killAll(rel, func() bool { return driver.exited() }, func(k kill) (string, error) {
		driver.kill()
		time.Sleep(k.restartAfter)
		resumes++
		driver, err = t.env.kumo.start("kumo-"+t.project, t.home, t.project, "resume")
		return "kumo resume", err
	})
	code := driver.exitCode(endWithin)
	switch want := t.wantExit(); {
	case code == -1:
		t.violation("kumo (after %d resumes) did not end within %s of the last restart", resumes, endWithin)
		return
	case code != want:
		t.violation("kumo exited %d, want %d (see %s)", code, want, filepath.Join(t.env.kumo.logs, "kumo-"+t.project+".log"))
	}
	t.waitFinal(rel, 10*time.Second)
}

func (t *trial) wantExit() int {
	if t.op == "compensation" {
		return 1
	}
	return 0
}

// waitRelease waits for the release of the run under kills to be created.
func (t *trial) waitRelease(timeout time.Duration, driver *proc) *engine.Release {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		rel, err := t.store.LatestRelease(context.Background(), t.project, "default")
		if err == nil && rel.Revision == t.runs && (t.runID == "" || rel.RunID == t.runID) {
			return rel
		}
		if driver != nil && driver.exited() {
			t.violation("kumo exited %d before its run made a release (see %s)", driver.cmd.ProcessState.ExitCode(), driver.out.Name())
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.violation("no release %d of run %s within %s", t.runs, t.runID, timeout)
	return nil
}

// progress is the release's phase and how many resources it has recorded.
func (t *trial) progress(rel *engine.Release) (engine.Phase, int) {
	ctx := context.Background()
	cur, err := t.store.GetRelease(ctx, t.project, "default", rel.Revision)
	if err != nil {
		return "unknown", 0
	}
	if cur.Phase.Final() {
		n := 0
		if cur.State != nil {
			n = len(cur.State.Resources)
		}
		return cur.Phase, n
	}
	entries, err := t.store.ListStateEntries(ctx, backend.KeyOf(cur))
	if err != nil && !errors.Is(err, backend.ErrNotFound) {
		return cur.Phase, 0
	}
	return cur.Phase, len(entries)
}

// killAll carries out the plan's kills: each waits for its moment, unless the
// run has ended (or stop says the process to kill is gone).
func (t *trial) killAll(rel *engine.Release, stop func() bool, killAndRestart func(kill) (string, error)) {
	since := time.Now()
	for i, k := range t.kills {
		for {
			phase, n := t.progress(rel)
			if phase.Final() || (stop != nil && stop()) {
				t.logf("kill %d of %s skipped: the run ended first (%s)", i+1, k.target, phase)
				t.sent["skipped"]++
				return
			}
			if n >= k.entries || time.Since(since) >= k.delay {
				at := time.Since(t.start)
				restarted, err := killAndRestart(k)
				t.sent[strings.TrimRight(k.target, "-0123456789")]++
				t.logf("kill %d: SIGKILL %s at %s (%s, %d resources recorded); %s started again %s later",
					i+1, k.target, at.Round(10*time.Millisecond), phase, n, restarted, k.restartAfter.Round(10*time.Millisecond))
				if err != nil {
					t.violation("start %s again: %v", restarted, err)
					return
				}
				since = time.Now()
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// waitFinal waits for the release to be final, as it must be by itself.
func (t *trial) waitFinal(rel *engine.Release, timeout time.Duration) *engine.Release {
	deadline := time.Now().Add(timeout)
	for {
		cur, err := t.store.GetRelease(context.Background(), t.project, "default", rel.Revision)
		if err == nil && cur.Phase.Final() {
			return cur
		}
		if time.Now().After(deadline) {
			phase := engine.Phase("unreadable")
			if cur != nil {
				phase = cur.Phase
			}
			t.violation("revision %d is still %s %s after the last restart: the run did not end by itself", rel.Revision, phase, timeout)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}
