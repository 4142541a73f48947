// Package memlimit gives a kumo process a soft memory limit. One kumo process
// holds an embedded Temporal server, its database, a worker and a client; left
// to the default GC pacing its heap may reach twice what it holds live, which
// for a run of 50,000 resources went past 1.4 GiB of RSS. A soft limit makes
// the GC work harder as the heap nears it instead (the runtime caps that work
// at half the CPU, so a live heap over the limit slows, never stops).
package memlimit

import (
	"os"
	"runtime/debug"
)

// Default is the soft limit of a kumo process unless GOMEMLIMIT says
// otherwise.
const Default = 768 << 20

// Set applies Default unless the environment sets GOMEMLIMIT (which the Go
// runtime has applied already); it returns the limit in force.
func Set() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	debug.SetMemoryLimit(Default)
	return Default
}
