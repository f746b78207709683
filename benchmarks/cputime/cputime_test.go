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

// Children counts a live child.
func TestChildren(t *testing.T) {
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
}
