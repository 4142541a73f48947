package localcluster

import "syscall"

func sysProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	// Killed with the test binary (or any caller) even when it dies without Stop.
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
