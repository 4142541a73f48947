package runspec

import (
	"hash/fnv"
	"time"
)

// SchedulePhase is where in each interval of length every the schedule with
// this ID fires: a fixed offset from the interval's start, taken from a hash
// of the ID and whole seconds. Temporal aligns interval schedules to the
// epoch, so without it every stack's check of a platform's "every 5m" would
// start in the same second and queue behind the others; with it they spread
// over the interval, each at the same point every time (as Jenkins' H and
// Argo CD's reconciliation jitter do), and a schedule updated with the same
// interval keeps its place.
func SchedulePhase(id string, every time.Duration) time.Duration {
	seconds := int64(every / time.Second)
	if seconds <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return time.Duration(h.Sum64()%uint64(seconds)) * time.Second
}
