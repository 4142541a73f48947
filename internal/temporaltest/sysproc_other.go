//go:build !linux

package temporaltest

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
