//go:build !linux

package hydratest

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
