package testproc

import "syscall"

// sysProcAttr has the server killed with the test binary, even when it dies
// without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
