package main

import (
	"fmt"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"sync/atomic"
	"time"
)

// heapWatch keeps in path the heap profile of the moment the live heap was
// highest since start, so the profile shows what made the peak RSS rather
// than what is left at the end. It looks every 200 ms and rewrites the
// profile when the heap live after the last collection grew by a twentieth
// over the highest seen. phase names what runs (apply, re-apply, destroy),
// printed with each new high.
type heapWatch struct {
	path  string
	phase atomic.Value // string
	stop  chan struct{}
	done  chan struct{}
}

func startHeapWatch(path string) *heapWatch {
	w := &heapWatch{path: path, stop: make(chan struct{}), done: make(chan struct{})}
	w.phase.Store("start")
	go w.run()
	return w
}

func (w *heapWatch) run() {
	defer close(w.done)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var high uint64
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		metrics.Read(sample)
		live := sample[0].Value.Uint64()
		if live < high+high/20 {
			continue
		}
		high = live
		if err := w.write(); err != nil {
			fmt.Fprintf(os.Stderr, "heap profile: %v\n", err)
			return
		}
		fmt.Fprintf(os.Stderr, "  live heap %d MiB during %s: profile in %s\n", live>>20, w.phase.Load(), w.path)
	}
}

func (w *heapWatch) write() error {
	f, err := os.Create(w.path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// close stops watching; the profile stays.
func (w *heapWatch) close() {
	close(w.stop)
	<-w.done
}
