package main

import "syscall"

// sysProcAttr: kumo processes die with the chaos program, even when it is killed.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
