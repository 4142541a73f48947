package runspec

import (
	"time"

	"github.com/kumoproj/kumo/engine/health"
)

// WaitResourceActivity is the name of the activity that waits for one applied
// resource's health; a client reads the health it heartbeats (WaitProgress)
// from the run's pending activities to show the wait live.
const WaitResourceActivity = "WaitResource"

// WaitProgress is what WaitResource heartbeats: when the wait began (its
// first attempt), and the resource's health now. A retried attempt reads
// Since back and keeps the first attempt's deadline.
type WaitProgress struct {
	ID     string        `json:"id"`
	Since  time.Time     `json:"since"`
	Health health.Result `json:"health"`
}

// WaitResourcesActivity is the name of the activity that waits for the
// health of several applied resources at once; it heartbeats a
// WaitBatchProgress.
const WaitResourcesActivity = "WaitResources"

// WaitBatchProgress is what WaitResources heartbeats: when its wait began
// (its first attempt, whose deadline a retried attempt keeps), and the
// health of each resource not healthy yet.
type WaitBatchProgress struct {
	Since time.Time      `json:"since"`
	Nodes []WaitProgress `json:"nodes,omitempty"`
}
