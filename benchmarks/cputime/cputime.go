// Package cputime reads CPU time (user plus system) for the benchmarks:
// this process's, from getrusage, and the live children of a process
// (compare's fauxqs), from Linux's /proc. /proc counts clock ticks (USER_HZ,
// 100 a second on Linux), so its figures move in 10 ms steps. Every
// function reads afresh and is safe for concurrent use.
package cputime

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Self returns the CPU time this process has used so far
// (getrusage RUSAGE_SELF), or 0 when the call fails.
func Self() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Children returns the CPU time used so far by the live child processes of
// process pid, and whether it has any (false too without /proc).
func Children(pid int) (time.Duration, bool) {
	var total time.Duration
	found := false
	for _, s := range processes() {
		if s.ppid == pid {
			total += s.own()
			found = true
		}
	}
	return total, found
}

// clockTick is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// stat is what the package reads of /proc/PID/stat.
type stat struct {
	ppid         int
	utime, stime int64 // clock ticks
}

func (s stat) own() time.Duration { return time.Duration(s.utime+s.stime) * clockTick }

// processes reads every process's stat, by PID.
func processes() map[int]stat {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	procs := make(map[int]stat, len(dirs))
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if s, ok := readStat(filepath.Base(d)); ok {
			procs[pid] = s
		}
	}
	return procs
}

// readStat reads /proc/PID/stat: "pid (comm) state ppid …", where comm may
// hold spaces and parentheses, utime and stime the 14th and 15th fields
// (proc(5)).
func readStat(pid string) (stat, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return stat{}, false
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return stat{}, false
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return stat{}, false
	}
	var n [3]int64
	for i, field := range []int{1, 11, 12} { // ppid, utime, stime
		if n[i], err = strconv.ParseInt(f[field], 10, 64); err != nil {
			return stat{}, false
		}
	}
	return stat{ppid: int(n[0]), utime: n[1], stime: n[2]}, true
}
