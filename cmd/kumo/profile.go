package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// profileEnv names a file to which a kumo process writes a CPU profile of its
// whole life (written when it exits on its own or on SIGINT/SIGTERM): how
// `kumo server` spends its CPU under a platform's load is read from it.
const profileEnv = "KUMO_CPUPROFILE"

// startProfile starts the CPU profile profileEnv asks for; the function it
// returns ends it and writes the file.
func startProfile() (stop func(), err error) {
	path := os.Getenv(profileEnv)
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", profileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", profileEnv, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
