package server

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// A kumo server keeps running between runs: after a large one (10,000
// resources) the Go runtime holds on to the heap the run freed, returning it
// to the OS only slowly, so an idle server stayed at its peak size. Every
// memoryCheckInterval it looks at how much free heap it still holds, and past
// memoryFreeThreshold returns it at once (debug.FreeOSMemory: one collection
// and a scavenge). docs/performance.md has the figures.
const (
	memoryCheckInterval = 30 * time.Second
	memoryFreeThreshold = 64 << 20
)

// heapFreeMetric is heap memory free and not yet returned to the OS.
const heapFreeMetric = "/memory/classes/heap/free:bytes"

// heapFree is how many bytes of free heap the process holds.
func heapFree() uint64 {
	s := []metrics.Sample{{Name: heapFreeMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// returnFreeMemory returns the free heap to the OS when it holds more than
// threshold bytes of it, and reports whether it did.
func returnFreeMemory(threshold uint64) bool {
	if heapFree() <= threshold {
		return false
	}
	debug.FreeOSMemory()
	return true
}

// startReturningMemory checks every interval until the returned stop is
// called.
func startReturningMemory(interval time.Duration, threshold uint64) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				returnFreeMemory(threshold)
			}
		}
	}()
	return func() { close(quit); <-done }
}
