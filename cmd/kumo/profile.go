package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profileEnv names a file to which a kumo process writes a CPU profile of its
// whole life, and heapProfileEnv one to which it writes its heap when it ends
// (both written when it exits on its own or on SIGINT/SIGTERM): how `kumo
// server` spends its CPU and memory under a platform's load is read from them.
const (
	profileEnv     = "KUMO_CPUPROFILE"
	heapProfileEnv = "KUMO_HEAPPROFILE"
)

// startProfile starts the CPU profile profileEnv asks for; the function it
// returns ends it and writes the files asked for.
func startProfile() (stop func(), err error) {
	stopCPU := func() {}
	if path := os.Getenv(profileEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", profileEnv, err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", profileEnv, err)
		}
		stopCPU = func() {
			pprof.StopCPUProfile()
			f.Close()
		}
	}
	heap := os.Getenv(heapProfileEnv)
	return func() {
		stopCPU()
		if heap != "" {
			if err := writeHeapProfile(heap); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", heapProfileEnv, err)
			}
		}
	}, nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // the live heap, not the garbage of the last cycle
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
