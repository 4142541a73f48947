//go:build linux

package temporaltest

import "syscall"

// sysProcAttr kills a service with the test process that started it.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
