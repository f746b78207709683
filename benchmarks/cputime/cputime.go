// Package cputime reads CPU time (user plus system) for the benchmarks:
// this process's, from getrusage, and other processes' on this machine,
// from Linux's /proc: the live children of a process (compare's fauxqs),
// or a process with all its descendants, the exited ones included
// (riverbench's PostgreSQL server). /proc counts clock ticks (USER_HZ,
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

// Tree returns the CPU time used so far by process pid and every
// descendant of it: their own (utime, stime), and that of the descendants
// that have exited and been waited for, which the kernel adds to the
// waiting parent's cutime and cstime. So a server's workers count whether
// they still run or not: PostgreSQL's postmaster forks every backend and
// autovacuum worker and waits for them. ok is false when pid has no /proc
// entry. A process that exits while /proc is read (a few milliseconds) may
// be counted twice or not at all.
func Tree(pid int) (d time.Duration, ok bool) {
	procs := processes()
	children := map[int][]int{}
	for p, s := range procs {
		children[s.ppid] = append(children[s.ppid], p)
	}
	if _, ok := procs[pid]; !ok {
		return 0, false
	}
	var sum func(p int) time.Duration
	sum = func(p int) time.Duration {
		s := procs[p]
		t := s.own() + s.waited()
		for _, c := range children[p] {
			t += sum(c)
		}
		return t
	}
	return sum(pid), true
}

// Parent returns the parent process of pid and its command name (the
// executable's, as /proc/PID/stat has it); ok is false when pid has no
// /proc entry.
func Parent(pid int) (ppid int, name string, ok bool) {
	s, ok := readStat(strconv.Itoa(pid))
	return s.ppid, s.name, ok
}

// clockTick is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// stat is what the package reads of /proc/PID/stat.
type stat struct {
	name                         string
	ppid                         int
	utime, stime, cutime, cstime int64 // clock ticks
}

func (s stat) own() time.Duration    { return time.Duration(s.utime+s.stime) * clockTick }
func (s stat) waited() time.Duration { return time.Duration(s.cutime+s.cstime) * clockTick }

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
// hold spaces and parentheses, utime, stime, cutime and cstime the 14th to
// 17th fields (proc(5)).
func readStat(pid string) (stat, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return stat{}, false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return stat{}, false
	}
	f := strings.Fields(s[end+1:]) // f[0] is field 3, the state
	if len(f) < 15 {
		return stat{}, false
	}
	var n [5]int64
	for i, field := range []int{1, 11, 12, 13, 14} { // ppid, utime, stime, cutime, cstime
		if n[i], err = strconv.ParseInt(f[field], 10, 64); err != nil {
			return stat{}, false
		}
	}
	return stat{name: s[open+1 : end], ppid: int(n[0]), utime: n[1], stime: n[2], cutime: n[3], cstime: n[4]}, true
}
