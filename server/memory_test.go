package server

import (
	"runtime"
	"testing"
)

var sink [][]byte

// TestFreeHeapIsReturned: after a large allocation is dropped, the free heap
// the runtime keeps is past the threshold, and one check gives it back.
func TestFreeHeapIsReturned(t *testing.T) {
	for range 256 {
		sink = append(sink, make([]byte, 1<<20))
	}
	for _, b := range sink {
		b[0] = 1
	}
	sink = nil
	runtime.GC()
	before := heapFree()
	if before <= memoryFreeThreshold {
		t.Fatalf("a dropped 256 MiB left only %d bytes free in the heap", before)
	}
	if !returnFreeMemory(memoryFreeThreshold) {
		t.Fatal("the free heap was not returned")
	}
	if after := heapFree(); after >= memoryFreeThreshold {
		t.Errorf("free heap %d bytes before, %d after returning it", before, after)
	}
	if returnFreeMemory(memoryFreeThreshold) {
		t.Error("returned again with nothing to return")
	}
}
