package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kumoproj/kumo/internal/benchstat"
)

// report is what one bench-platform run measured.
type report struct {
	cfg     config
	started time.Time
	// setup: applying every stack the first time, stacks in flight at once.
	setup time.Duration
	// idle and loaded: apply latencies on the idle server and under the load.
	idle, loaded []time.Duration
	loadErrors   []error
	// turnedAway: applies that arrived while -inflight ran (-rate only).
	turnedAway int
	// loadStart and loadEnd bound the load.
	loadStart, loadEnd time.Time
	// lateness of each drift check due during the load.
	lateness []time.Duration
	// paused: schedules Temporal paused (after a failed check).
	paused int
	// unread: schedules that could not be described after the load (their
	// checks are missing from the lateness).
	unread  []error
	samples []sample
}

// recentChecks is how many of its latest checks a Temporal schedule reports.
const recentChecks = 10

// Goals of issue 32.
const (
	goalLateness = 5 * time.Second
	goalLatency  = 1.5
	goalCPU      = 0.5
)

func (r *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Platform load: one kumo server\n\n")
	fmt.Fprintf(&b, "`make bench-platform` (`go run ./bench/platform`), %s, on %s, load average at the end %s.\n\n",
		r.started.UTC().Format("2006-01-02 15:04 UTC"), benchstat.Machine(), benchstat.LoadAverage())
	fmt.Fprintf(&b, "One `kumo server` (the binary, headless) on a local cluster carries %d stacks of %d ConfigMaps and their Namespace, each with a drift schedule every %s (warn mode; %.2f checks a second). ",
		r.cfg.stacks, r.cfg.resources, r.cfg.every, float64(r.cfg.stacks)/r.cfg.every.Seconds())
	if r.cfg.rate > 0 {
		fmt.Fprintf(&b, "For %s, applies arrive at random, %.2f a second on average (at most %d at once; %d arrived while %d ran and were turned away), each changing every ConfigMap of a random stack. ",
			r.cfg.duration, r.cfg.rate, r.cfg.inflight, r.turnedAway, r.cfg.inflight)
	} else {
		fmt.Fprintf(&b, "For %s, %d applies run back to back (a saturation run: %.2f applies a second were reached), each changing every ConfigMap of a random stack. ",
			r.cfg.duration, r.cfg.inflight, float64(len(r.loaded))/r.cfg.duration.Seconds())
	}
	retention := "Temporal's retention of closed runs: the server's default, 7d; kumo's run logs and drift reports: 30d"
	if r.cfg.retention != "" {
		releases := "every revision"
		if r.cfg.retainReleases > 0 {
			releases = fmt.Sprintf("the newest %d revisions of each stack", r.cfg.retainReleases)
		}
		retention = fmt.Sprintf("Temporal's retention of closed runs, and kumo's of run logs and drift reports: %s; releases kept: %s (collected every %s)", r.cfg.retention, releases, r.cfg.gcEvery)
	}
	fmt.Fprintf(&b, "Setup (every stack applied once, %d at a time) took %s. %s.\n\n", r.cfg.inflight, r.setup.Round(time.Second), retention)

	b.WriteString("| measure | value | goal | met |\n| --- | --- | --- | --- |\n")
	late := slices.Clone(r.lateness)
	p95Late := benchstat.Quantile(late, 0.95)
	fmt.Fprintf(&b, "| schedule lateness p50 / p95 / max (%d checks) | %s / %s / %s | p95 ≤ %s | %s |\n",
		len(late), secs(benchstat.Quantile(late, 0.5)), secs(p95Late), secs(benchstat.Quantile(late, 1)), goalLateness, met(len(late) > 0 && p95Late <= goalLateness))
	idle, loaded := slices.Clone(r.idle), slices.Clone(r.loaded)
	ratio := float64(benchstat.Quantile(loaded, 0.95)) / float64(max(benchstat.Quantile(idle, 0.95), 1))
	fmt.Fprintf(&b, "| apply p50 / p95, idle server (%d applies) | %s / %s | | |\n", len(idle), secs(benchstat.Quantile(idle, 0.5)), secs(benchstat.Quantile(idle, 0.95)))
	fmt.Fprintf(&b, "| apply p50 / p95 under load (%d applies, %d failed, %d turned away) | %s / %s (p95 %.2f× idle) | p95 ≤ %.1f× idle | %s |\n",
		len(loaded), len(r.loadErrors), r.turnedAway, secs(benchstat.Quantile(loaded, 0.5)), secs(benchstat.Quantile(loaded, 0.95)), ratio, goalLatency, met(ratio <= goalLatency && len(r.loadErrors) == 0 && r.turnedAway == 0))
	if n := len(r.samples); n >= 2 {
		first, last := r.samples[0], r.samples[n-1]
		cpu := float64(last.cpu-first.cpu) / float64(last.at.Sub(first.at))
		fmt.Fprintf(&b, "| server CPU, average over the load | %.0f %% of one core | ≤ %.0f %% | %s |\n", cpu*100, goalCPU*100, met(cpu <= goalCPU))
		var peak int64
		for _, s := range r.samples {
			peak = max(peak, s.rss)
		}
		fmt.Fprintf(&b, "| server RSS at the start / end / highest | %s / %s / %s | | |\n", mib(first.rss), mib(last.rss), mib(peak))
		db := func(s sample) int64 { return s.db }
		backend := func(s sample) int64 { return s.backend }
		fmt.Fprintf(&b, "| Temporal database at the start / end (growth in the first / second half; in the last quarter) | %s / %s (%s / %s; %s) | a plateau | |\n",
			mib(first.db), mib(last.db), mib(half(r.samples, 0, db)), mib(half(r.samples, 1, db)), mib(lastQuarter(r.samples, db)))
		fmt.Fprintf(&b, "| backend at the start / end (growth in the first / second half; in the last quarter) | %s / %s (%s / %s; %s) | a plateau | |\n",
			mib(first.backend), mib(last.backend), mib(half(r.samples, 0, backend)), mib(half(r.samples, 1, backend)), mib(lastQuarter(r.samples, backend)))
	}
	fmt.Fprintf(&b, "| schedules paused by Temporal after a failed check | %d | 0 | %s |\n", r.paused, met(r.paused == 0))
	if r.cfg.duration > recentChecks*r.cfg.every {
		fmt.Fprintf(&b, "\nA schedule keeps its last %d checks: the lateness covers the last %s of the load, not the whole %s.\n", recentChecks, recentChecks*r.cfg.every, r.cfg.duration)
	}
	if len(r.unread) > 0 {
		fmt.Fprintf(&b, "\n%d schedules could not be described after the load (their checks are not in the lateness); the first: %v\n", len(r.unread), r.unread[0])
	}
	if len(r.loadErrors) > 0 {
		fmt.Fprintf(&b, "\nFirst failed apply: %v\n", r.loadErrors[0])
	}

	b.WriteString("\nOver time (CPU: share of one core since the previous row):\n\n| minutes | CPU | RSS | Temporal database | backend |\n| ---: | ---: | ---: | ---: | ---: |\n")
	step := max(1, len(r.samples)/12)
	for i := 0; i < len(r.samples); i += step {
		s := r.samples[i]
		cpu := "—"
		if i > 0 {
			prev := r.samples[i-step]
			cpu = fmt.Sprintf("%.0f %%", 100*float64(s.cpu-prev.cpu)/float64(s.at.Sub(prev.at)))
		}
		fmt.Fprintf(&b, "| %.1f | %s | %s | %s | %s |\n", s.at.Sub(r.samples[0].at).Minutes(), cpu, mib(s.rss), mib(s.db), mib(s.backend))
	}
	return b.String()
}

// half is how much v grew over the first (0) or second (1) half of the samples.
func half(samples []sample, which int, v func(sample) int64) int64 {
	mid := len(samples) / 2
	if which == 0 {
		return v(samples[mid]) - v(samples[0])
	}
	return v(samples[len(samples)-1]) - v(samples[mid])
}

// lastQuarter is how much v grew over the last quarter of the samples: a
// plateau shows here once the run outlasts its retention.
func lastQuarter(samples []sample, v func(sample) int64) int64 {
	return v(samples[len(samples)-1]) - v(samples[len(samples)*3/4])
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}
