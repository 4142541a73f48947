package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/kumoproj/kumo/internal/benchstat"
)

type result struct {
	row   row
	floor times
	kumo  kumoTimes
	null  kumoTimes // zero when skipped
	runs  int       // how many runs the times are the median of
}

// median is runs[0] with every time replaced by the median of the runs' (the
// history, database and backend figures are the first run's: they hardly
// vary) and the peak memory by the highest. A destroy's time without its
// Namespace's finalization (what the tables show) is the median of each run's,
// not the difference of the two medians: both are about five seconds, and the
// runs' finalizations differ by as much as the rest of the destroy takes.
func median(runs []result) result {
	out := runs[0]
	out.runs = len(runs)
	for _, r := range runs {
		out.kumo.peakRSS = max(out.kumo.peakRSS, r.kumo.peakRSS)
		out.kumo.idleRSS, out.kumo.returnedRSS = max(out.kumo.idleRSS, r.kumo.idleRSS), max(out.kumo.returnedRSS, r.kumo.returnedRSS)
	}
	pick := func(get func(*result) *time.Duration) {
		ds := make([]time.Duration, len(runs))
		for i := range runs {
			ds[i] = *get(&runs[i])
		}
		*get(&out) = benchstat.Quantile(ds, 0.5)
	}
	for _, get := range []func(*result) *time.Duration{
		func(r *result) *time.Duration { return &r.floor.apply },
		func(r *result) *time.Duration { return &r.floor.reapply },
		func(r *result) *time.Duration { return &r.floor.destroy },
		func(r *result) *time.Duration { return &r.floor.nsFinalize },
		func(r *result) *time.Duration { return &r.kumo.apply },
		func(r *result) *time.Duration { return &r.kumo.reapply },
		func(r *result) *time.Duration { return &r.kumo.destroy },
		func(r *result) *time.Duration { return &r.kumo.nsFinalize },
		func(r *result) *time.Duration { return &r.kumo.serverStart },
		func(r *result) *time.Duration { return &r.null.apply },
		func(r *result) *time.Duration { return &r.null.reapply },
		func(r *result) *time.Duration { return &r.null.destroy },
	} {
		pick(get)
	}
	own := func(get func(*result) *times) {
		ds := make([]time.Duration, len(runs))
		for i := range runs {
			ds[i] = get(&runs[i]).ownDestroy()
		}
		t := get(&out)
		t.destroy = benchstat.Quantile(ds, 0.5) + t.nsFinalize
	}
	own(func(r *result) *times { return &r.floor })
	own(func(r *result) *times { return &r.kumo.times })
	return out
}

type report struct {
	parallel int
	started  time.Time
	load     string
	results  []result
	drift    []driftResult
	updates  []updateResult
	peers    []peerResult
	installs []installResult
	// production: kumo ran on temporal-server's services on PostgreSQL
	// (-temporal production), not on an embedded server per row.
	production bool
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f×", a.Seconds()/b.Seconds())
}

// op is one of a row's runs: apply, re-apply or destroy.
type op struct {
	name         string
	floor, kumo  time.Duration
	null         time.Duration
	h, nh        history
	db, written  int64 // kumo's database growth and backend writes
	fin, kumoFin time.Duration
}

// ops lists apply, re-apply and destroy with their times. A destroy's
// Namespace finalization is taken out of both sides and shown apart.
func (r result) ops() []op {
	k := r.kumo
	return []op{
		{"apply", r.floor.apply, k.apply, r.null.apply, k.hist[0], r.null.hist[0], k.dbGrowth[0], k.written[0], 0, 0},
		{"re-apply", r.floor.reapply, k.reapply, r.null.reapply, k.hist[1], r.null.hist[1], k.dbGrowth[1], k.written[1], 0, 0},
		{"destroy", r.floor.ownDestroy(), k.ownDestroy(), r.null.destroy, k.hist[2], r.null.hist[2], k.dbGrowth[2], k.written[2], r.floor.nsFinalize, k.nsFinalize},
	}
}

// opLines calls line for every op of every row, with the row's resource count.
func (rep *report) opLines(line func(r result, n int, o op)) {
	for _, r := range rep.results {
		for _, o := range r.ops() {
			line(r, r.row.n+1, o)
		}
	}
}

func (r result) lines() string {
	var b strings.Builder
	for _, o := range r.ops() {
		fmt.Fprintf(&b, "  %-9s floor %6ss  kumo %6ss  %6s  null %6ss  events %d  db %s KiB  written %s KiB\n", o.name, secs(o.floor), secs(o.kumo), ratio(o.kumo, o.floor), secs(o.null), o.h.events, kib(o.db), kib(o.written))
	}
	fmt.Fprintf(&b, "  peak RSS %s MiB\n", mib(r.kumo.peakRSS))
	return b.String()
}

func perRes(x int64, n int) float64 { return float64(x) / float64(n) }

func kib(x int64) string { return fmt.Sprintf("%.0f", float64(x)/(1<<10)) }

func mib(x int64) string { return fmt.Sprintf("%.0f", float64(x)/(1<<20)) }

func (rep *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kumo against the floor\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (bench/) on %s. Machine: %s. Load average after the run: %s. Parallelism %d for kumo and the floor.\n\n",
		rep.started.UTC().Format("2006-01-02 15:04 UTC"), benchstat.Machine(), rep.load, rep.parallel)
	if rep.production {
		fmt.Fprintf(&b, "Temporal: production-shaped (`-temporal production`): temporal-server's frontend, history, matching and worker services as separate processes, PostgreSQL persistence and SQL visibility, TLS on the frontend (deploy/temporal-production.md); the worker in the bench process. Server start is not timed; database growth is PostgreSQL's on-disk size of both databases.\n\n")
	}
	if len(rep.results) > 0 {
		rep.timesTable(&b)
		rep.usageTable(&b)
		rep.rowTable(&b)
	}
	if len(rep.results) > 0 {
		rep.recordsTable(&b)
	}
	if len(rep.updates) > 0 {
		rep.updateTable(&b)
	}
	if len(rep.drift) > 0 {
		rep.driftTable(&b)
	}
	peersTable(&b, rep.peers)
	installTable(&b, rep.installs)
	return b.String()
}

// timesTable: kumo's times against the floor's, and the null runtime's.
func (rep *report) timesTable(b *strings.Builder) {
	b.WriteString("The floor is raw server-side apply of the same objects from as many goroutines, with no client-side rate limiter (bench/floor.go); kumo runs on the embedded Temporal server, already started (server start is listed apart: a one-shot CLI command pays it once). Destroy times exclude the Namespace's own finalization (delete call to gone), listed apart for both. Every resource is one ConfigMap plus the Namespace (n+1 resources).\n\n")
	b.WriteString("Rows of up to 2,000 resources show the median of several runs (the runs column; larger rows run once); the ratio is of those medians. The null runtime is kumo with an in-memory runtime for every resource: its time is kumo's own orchestration; node latency is, per resource activity, scheduled to completed in the run's history.\n\n")
	b.WriteString("| row | runs | op | floor s | kumo s | kumo / floor | kumo, null runtime s | null: ms/resource (wall) | null: node latency median / p95 ms |\n")
	b.WriteString("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	rep.opLines(func(r result, n int, o op) {
		nullS, nullPer, lat := "-", "-", "-"
		if o.null > 0 {
			nullS, nullPer = secs(o.null), ms(o.null/time.Duration(n))
			if len(o.nh.nodeLatency) > 0 {
				lat = ms(benchstat.Quantile(o.nh.nodeLatency, 0.5)) + " / " + ms(benchstat.Quantile(o.nh.nodeLatency, 0.95))
			}
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", r.row.name, r.runs, o.name, secs(o.floor), secs(o.kumo), ratio(o.kumo, o.floor), nullS, nullPer, lat)
	})
}

// usageTable: what each kumo run left in Temporal and wrote to the backend.
func (rep *report) usageTable(b *strings.Builder) {
	b.WriteString("\nWhat each kumo run (real runtime, the row's first run) left behind. History: the run's workflow history as the server returns it (events, and their protobuf size). Database growth: the embedded server's SQLite database, used pages (page count less free pages, times page size, WAL included) after the run less before. Backend written: every byte the backend handed its storage during the run (releases, state entries, specs, run logs; overwrites counted each time), against the size of the state the apply recorded (the release's state as YAML; for destroy, the state it removed): how much a run rewrites.\n\n")
	b.WriteString("| row | op | history events | events / resource | history KiB | history bytes / resource | database growth KiB | database bytes / resource | backend written KiB | written ÷ state |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	rep.opLines(func(r result, n int, o op) {
		st := "-"
		if r.kumo.state > 0 {
			st = fmt.Sprintf("%.2f", float64(o.written)/float64(r.kumo.state))
		}
		fmt.Fprintf(b, "| %s | %s | %d | %.2f | %s | %.0f | %s | %.0f | %s | %s |\n", r.row.name, o.name, o.h.events, perRes(int64(o.h.events), n), kib(int64(o.h.bytes)), perRes(int64(o.h.bytes), n),
			kib(o.db), perRes(o.db, n), kib(o.written), st)
	})
}

// rowTable: Namespace finalization, server start and peak memory per row.
func (rep *report) rowTable(b *strings.Builder) {
	b.WriteString("\nPer row: Namespace finalization (destroy, excluded above), embedded server start, and the peak resident memory of the kumo process over its apply, re-apply and destroy. The bench is that process: embedded Temporal server, worker and client in one, as `kumo apply` runs; the peak is the kernel's high-water mark (VmHWM in /proc/self/status), reset (5 to /proc/self/clear_refs, after a garbage collection and the free heap returned to the OS) after the floor and before the server starts, so the floor's client is not counted, and again before the re-apply and the destroy, so what the bench reads to measure a run (a release decoded whole) is not counted either; the highest of the row's runs. Idle RSS: resident memory (VmRSS) once the destroy ended, the server still up, kept as the runtime left it and after the free heap went back to the OS, as `kumo server` does after a large run (server/memory.go); the highest of the row's runs.\n\n")
	b.WriteString("| row | floor: Namespace gone s | kumo: Namespace delete s | kumo server start s | kumo peak RSS MiB | idle RSS MiB, kept | idle RSS MiB, returned |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rep.results {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.row.name, secs(r.floor.nsFinalize), secs(r.kumo.nsFinalize), secs(r.kumo.serverStart), mib(r.kumo.peakRSS),
			mib(r.kumo.idleRSS), mib(r.kumo.returnedRSS))
	}
}

// driftTable: drift checks of applied resources, kumo alone.
func (rep *report) driftTable(b *strings.Builder) {
	b.WriteString("\nDrift check: kumo applies the ConfigMaps and their Namespace, then one drift check (the DriftCheck workflow, warn mode, through client.CheckDrift) compares them with live and must find all in sync; timed from the request to the stored report. Requests: what the apiserver counted (apiserver_request_total) for ConfigMaps and Namespaces during the check, dry runs apart. No floor: nothing else does this.\n\n")
	b.WriteString("| row | resources | kumo apply s | drift check s | check ms / resource | apiserver requests |\n| --- | ---: | ---: | ---: | ---: | --- |\n")
	for _, d := range rep.drift {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s |\n", d.name, d.n+1, secs(d.apply), secs(d.check), ms(d.check/time.Duration(d.n+1)), d.requests)
	}
}

// recordsTable: backend bytes per revision, next to Helm's for the same objects.
func (rep *report) recordsTable(b *strings.Builder) {
	b.WriteString("\nBackend bytes per revision (real runtime, the row's first run): how much kumo's backend files (releases, their state chunks, specs) grew with each run's revision; before: what record format 1 (the whole release as YAML, before compact records) wrote for the same revision; Helm: the payload of the release Secret Helm's storage driver writes for a release of the same objects (chart of one template, rendered manifest, values; bench/records.go). A destroy has no Helm equivalent (uninstall deletes the history).\n\n")
	b.WriteString("| row | op | kumo bytes | before (format 1) bytes | Helm release Secret bytes | kumo ÷ Helm |\n| --- | --- | ---: | ---: | ---: | ---: |\n")
	for _, r := range rep.results {
		for i, name := range []string{"apply", "re-apply", "destroy"} {
			c := r.kumo.revs[i]
			helm, ratio := "-", "-"
			if c.helm > 0 {
				helm, ratio = fmt.Sprint(c.helm), fmt.Sprintf("%.2f", float64(c.stored)/float64(c.helm))
			}
			fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %s |\n", r.row.name, name, c.stored, c.before, helm, ratio)
		}
	}
}
