package main

import "syscall"

// sysProcAttr puts a command in a process group of its own (so that its
// children are stopped with it, and a Ctrl+C at the terminal reaches
// sqsloop alone, which drains), and has the kernel kill it should sqsloop
// die without stopping it (SIGKILL).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
