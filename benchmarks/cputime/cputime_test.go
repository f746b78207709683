package cputime_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/benchmarks/cputime"
)

// burnEnv makes this test binary a child that spends its value (a
// duration) of CPU time, then exits.
const burnEnv = "CPUTIME_TEST_BURN"

func TestMain(m *testing.M) {
	if v := os.Getenv(burnEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			os.Exit(2)
		}
		for cputime.Self() < d {
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Tree counts a descendant that has exited: a child that spent 300 ms of
// CPU and was waited for is in this process's tree, though no longer in
// /proc. (Summing the live processes, as riverbench once did for
// PostgreSQL's backends, misses it.)
func TestTreeCountsExitedChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	self := os.Getpid()
	before, ok := cputime.Tree(self)
	if !ok {
		t.Fatalf("Tree(%d): no /proc entry for this process", self)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), burnEnv+"=300ms")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	child := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	after, _ := cputime.Tree(self)
	t.Logf("the child spent %v; the tree grew by %v", child, after-before)
	// /proc truncates each of utime, stime, cutime and cstime to a clock
	// tick: 3 ticks of slack. Without the exited child the tree would grow
	// by this process's own few milliseconds.
	if grew := after - before; grew < child-30*time.Millisecond {
		t.Errorf("the tree grew by %v while a child that spent %v ran and exited, want at least that", grew, child)
	}
}

// Children counts a live child, and Parent names a process's parent.
func TestChildrenAndParent(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), burnEnv+"=1h")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var d time.Duration
	for start := time.Now(); d < 50*time.Millisecond; d, _ = cputime.Children(os.Getpid()) {
		if time.Since(start) > time.Minute {
			t.Fatalf("Children: %v after a minute of a child that burns CPU", d)
		}
		time.Sleep(10 * time.Millisecond) // the child burns meanwhile
	}
	ppid, name, ok := cputime.Parent(cmd.Process.Pid)
	if !ok || ppid != os.Getpid() || name != "cputime.test" {
		t.Errorf("Parent(child) = %d, %q, %v; want %d, \"cputime.test\", true", ppid, name, ok, os.Getpid())
	}
}
