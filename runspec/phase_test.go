package runspec

import (
	"fmt"
	"testing"
	"time"
)

func TestSchedulePhaseIsStableAndInsideTheInterval(t *testing.T) {
	every := 5 * time.Minute
	id := DriftScheduleID("shop", "prod")
	p := SchedulePhase(id, every)
	if p < 0 || p >= every || p%time.Second != 0 {
		t.Fatalf("phase %s of %s: want whole seconds in [0, %s)", p, id, every)
	}
	if again := SchedulePhase(id, every); again != p {
		t.Fatalf("phase of %s moved: %s then %s", id, p, again)
	}
	if SchedulePhase(id, time.Second) != 0 || SchedulePhase(id, 500*time.Millisecond) != 0 {
		t.Fatal("an interval of a second or less has no room for a phase")
	}
}

// A platform's stacks, all checked every 5 minutes, must not start their
// checks together: no second of the interval may hold more than a few.
func TestSchedulePhaseSpreadsAPlatform(t *testing.T) {
	every := 5 * time.Minute
	perSecond := map[time.Duration]int{}
	for i := range 1000 {
		perSecond[SchedulePhase(DriftScheduleID(fmt.Sprintf("plat-%04d", i), "default"), every)]++
	}
	busiest := 0
	for _, n := range perSecond {
		busiest = max(busiest, n)
	}
	// 1,000 checks over 300 seconds average 3.3 a second; a fair hash puts
	// no more than about 12 in any one second.
	if len(perSecond) < 250 || busiest > 12 {
		t.Fatalf("1,000 schedules fall in %d of 300 seconds, at most %d in one: want them spread", len(perSecond), busiest)
	}
}
