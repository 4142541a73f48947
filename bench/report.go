package main

import (
	"fmt"
	"strings"
	"time"
)

type result struct {
	row   row
	floor times
	kumo  kumoTimes
	null  kumoTimes // zero when skipped
	runs  int       // how many runs the times are the median of
}

// median is runs[0] with every time replaced by the median of the runs' (the
// history figures are the first run's: they do not vary).
func median(runs []result) result {
	out := runs[0]
	out.runs = len(runs)
	pick := func(get func(*result) *time.Duration) {
		ds := make([]time.Duration, len(runs))
		for i := range runs {
			ds[i] = *get(&runs[i])
		}
		*get(&out) = quantile(ds, 0.5)
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
	return out
}

type report struct {
	parallel int
	started  time.Time
	load     string
	results  []result
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f×", a.Seconds()/b.Seconds())
}

// ops lists apply, re-apply and destroy with their times. A destroy's
// Namespace finalization is taken out of both sides and shown apart.
func (r result) ops() []struct {
	name         string
	floor, kumo  time.Duration
	null         time.Duration
	h, nh        history
	fin, kumoFin time.Duration
} {
	type op = struct {
		name         string
		floor, kumo  time.Duration
		null         time.Duration
		h, nh        history
		fin, kumoFin time.Duration
	}
	return []op{
		{"apply", r.floor.apply, r.kumo.apply, r.null.apply, r.kumo.hist[0], r.null.hist[0], 0, 0},
		{"re-apply", r.floor.reapply, r.kumo.reapply, r.null.reapply, r.kumo.hist[1], r.null.hist[1], 0, 0},
		{"destroy", r.floor.destroy - r.floor.nsFinalize, r.kumo.destroy - r.kumo.nsFinalize, r.null.destroy, r.kumo.hist[2], r.null.hist[2], r.floor.nsFinalize, r.kumo.nsFinalize},
	}
}

func (r result) lines() string {
	var b strings.Builder
	for _, o := range r.ops() {
		fmt.Fprintf(&b, "  %-9s floor %6ss  kumo %6ss  %6s  null %6ss  events/res %.1f\n", o.name, secs(o.floor), secs(o.kumo), ratio(o.kumo, o.floor), secs(o.null), perRes(o.h.events, r.row.n+1))
	}
	return b.String()
}

func perRes(x, n int) float64 { return float64(x) / float64(n) }

func (rep *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kumo against the floor\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (bench/) on %s. Machine: %s. Load average after the run: %s. Parallelism %d for kumo and the floor.\n\n",
		rep.started.UTC().Format("2006-01-02 15:04 UTC"), machine(), rep.load, rep.parallel)
	b.WriteString("The floor is raw server-side apply of the same objects from as many goroutines, with no client-side rate limiter (bench/floor.go); kumo runs on the embedded Temporal server, already started (server start is listed apart: a one-shot CLI command pays it once). Destroy times exclude the Namespace's own finalization (delete call to gone), listed apart for both. Every resource is one ConfigMap plus the Namespace (n+1 resources).\n\n")
	b.WriteString("Rows of up to 200 resources show the median of several runs (the runs column); the ratio is of those medians.\n\n")
	b.WriteString("| row | runs | op | floor s | kumo s | kumo / floor | kumo, null runtime s | null: ms/resource (wall) | null: node latency median / p95 ms | history events / resource | history bytes / resource |\n")
	b.WriteString("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rep.results {
		n := r.row.n + 1
		for _, o := range r.ops() {
			nullPer, lat := "-", "-"
			if o.null > 0 {
				nullPer = ms(o.null / time.Duration(n))
				if len(o.nh.nodeLatency) > 0 {
					lat = ms(quantile(o.nh.nodeLatency, 0.5)) + " / " + ms(quantile(o.nh.nodeLatency, 0.95))
				}
			}
			nullS := "-"
			if o.null > 0 {
				nullS = secs(o.null)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.1f | %.0f |\n", r.row.name, r.runs, o.name, secs(o.floor), secs(o.kumo), ratio(o.kumo, o.floor),
				nullS, nullPer, lat, perRes(o.h.events, n), perRes(o.h.bytes, n))
		}
	}
	b.WriteString("\nNamespace finalization (destroy, excluded above) and embedded server start:\n\n| row | floor: Namespace gone s | kumo: Namespace delete s | kumo server start s |\n| --- | ---: | ---: | ---: |\n")
	for _, r := range rep.results {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.row.name, secs(r.floor.nsFinalize), secs(r.kumo.nsFinalize), secs(r.kumo.serverStart))
	}
	return b.String()
}
