//go:build unix && !linux

package main

import "syscall"

// sysProcAttr puts a command in a process group of its own, so that its
// children are stopped with it, and a Ctrl+C at the terminal reaches
// sqsloop alone, which drains.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
