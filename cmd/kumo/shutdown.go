package main

import (
	"os"
	"os/signal"
	"syscall"
)

// exitOnSecondSignal makes a second interrupt or SIGTERM, during a graceful
// stop, end the process at once.
func exitOnSecondSignal() {
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-again
		os.Exit(130)
	}()
}
