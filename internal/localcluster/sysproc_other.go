//go:build unix && !linux

package localcluster

import "syscall"

func sysProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return nil
}
