//go:build !linux

package vaulttest

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
