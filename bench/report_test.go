package main

import (
	"testing"
	"time"
)

// TestMedianDestroyIsEachRunsOwn: the destroy the tables show is the median
// of each run's destroy less its Namespace's finalization; the difference of
// the two medians mixes runs (here 0.05 s for the floor, whose runs took
// 0.02 to 0.10 s, 0.08 s the median).
func TestMedianDestroyIsEachRunsOwn(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	run := func(floorDestroy, floorFin, kumoDestroy, kumoFin int) result {
		var r result
		r.floor.destroy, r.floor.nsFinalize = ms(floorDestroy), ms(floorFin)
		r.kumo.destroy, r.kumo.nsFinalize = ms(kumoDestroy), ms(kumoFin)
		return r
	}
	m := median([]result{
		run(5080, 5000, 5130, 5000),
		run(5200, 5100, 5260, 5100),
		run(5150, 5130, 5280, 5130),
	})
	if got := m.floor.ownDestroy(); got != ms(80) {
		t.Errorf("floor destroy without finalization: %v, want 80ms", got)
	}
	if got := m.kumo.ownDestroy(); got != ms(150) {
		t.Errorf("kumo destroy without finalization: %v, want 150ms", got)
	}
	if got := m.floor.nsFinalize; got != ms(5100) {
		t.Errorf("floor finalization: %v, want the median 5100ms", got)
	}
	ops := m.ops()
	if d := ops[2]; d.name != "destroy" || d.floor != ms(80) || d.kumo != ms(150) {
		t.Errorf("destroy op: %+v", d)
	}
}
