package childproc_test

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/internal/harness/childproc"
)

// roleEnv makes this test binary a child process of the test here: "parent"
// starts a child of its own ("sleeper"), which waits for ever.
const roleEnv = "SQSLOOP_CHILDPROC_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "parent":
		// Starts a sleeper, says its PID once it runs, and waits to be killed.
		c := childproc.Start(roleTB{}, roleEnv+"=sleeper")
		c.Expect(roleTB{}, "sleeping", time.Minute)
		childproc.Say("sleeper %d", c.Cmd.Process.Pid)
		time.Sleep(time.Hour)
		os.Exit(1)
	case "sleeper":
		childproc.Say("sleeping")
		time.Sleep(time.Hour)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// roleTB is the testing.TB of a child process that starts a child of its
// own: a failure exits with childproc.Failed's status, and the cleanups
// are never run (the process is killed).
type roleTB struct{ testing.TB }

func (roleTB) Helper()        {}
func (roleTB) Cleanup(func()) {}
func (roleTB) Fatal(args ...any) {
	os.Exit(childproc.Failed(fmt.Errorf("%s", fmt.Sprint(args...))))
}
func (roleTB) Fatalf(format string, args ...any) {
	os.Exit(childproc.Failed(fmt.Errorf(format, args...)))
}

// A child does not outlive its parent: a process started with Start
// ("parent") starts one of its own ("sleeper", which would wait an hour)
// and is killed with SIGKILL, so that no cleanup of its runs; the sleeper
// exits within 10 s.
func TestChildExitsWhenItsParentDies(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc to watch the child through: %v", err)
	}
	parent := childproc.Start(t, roleEnv+"=parent")
	var pid int
	for line := range parent.Within(t, 30*time.Second) {
		if s, ok := strings.CutPrefix(line, "sleeper "); ok {
			pid, _ = strconv.Atoi(s)
			break
		}
	}
	if pid == 0 {
		t.Fatalf("the parent ended without starting its child; stderr:\n%s", parent.Stderr())
	}
	t.Cleanup(func() {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if err := parent.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Rest(t, 10*time.Second); err == nil {
		t.Fatalf("the parent exited 0, want killed")
	}
	killed := time.Now()
	for alive(pid) {
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("the child (pid %d) still runs 10 s after its parent was killed", pid)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc: the child is not ours to wait for
	}
	t.Logf("the child exited %v after its parent was killed", time.Since(killed).Round(time.Millisecond))
}

// Within fails its test when the child's output has not ended in time: on
// a child that waits an hour after its one line, a 200 ms deadline, after
// no line. The child's line is read first, with no bound that a slow
// machine could miss (Expect's minute), so that the 200 ms never race the
// child's start.
func TestWithinFailsWhenTheChildHangs(t *testing.T) {
	c := childproc.Start(t, roleEnv+"=sleeper")
	c.Expect(t, "sleeping", time.Minute)
	lines, failure := within(t, c, 200*time.Millisecond)
	t.Logf("Within failed with %q", failure)
	if len(lines) != 0 || !strings.Contains(failure, "still running 200ms later, after 0 lines") {
		t.Errorf("Within yielded %q and failed with %q, want no line, then the deadline's failure", lines, failure)
	}
}

// Within yields each line as it comes until its deadline, then fails its
// test, at the deadline: in virtual time (testing/synctest), on a Child
// whose lines the test writes, one at once and one 100 ms later, with a
// 200 ms deadline.
func TestWithinYieldsLinesUntilItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &childproc.Child{Lines: make(chan string, 2)}
		c.Lines <- "one"
		go func() {
			time.Sleep(100 * time.Millisecond)
			c.Lines <- "two"
		}()
		start := time.Now()
		lines, failure := within(t, c, 200*time.Millisecond)
		if !slices.Equal(lines, []string{"one", "two"}) || !strings.Contains(failure, "still running 200ms later, after 2 lines") {
			t.Errorf("Within yielded %q and failed with %q, want both lines, then the deadline's failure", lines, failure)
		}
		if took := time.Since(start); took != 200*time.Millisecond {
			t.Errorf("Within failed %v after the call, want 200ms", took)
		}
	})
}

// within ranges over c.Within(d) with a TB that records its failure, and
// returns the lines yielded and the failure ("" if none).
func within(t *testing.T, c *childproc.Child, d time.Duration) (lines []string, failure string) {
	rec := &failureTB{TB: t}
	done := make(chan struct{})
	go func() { // Fatalf ends this goroutine
		defer close(done)
		for line := range c.Within(rec, d) {
			lines = append(lines, line)
		}
	}()
	<-done
	return lines, rec.failure
}

// failureTB records a Fatalf and ends the goroutine, as testing's does.
type failureTB struct {
	testing.TB
	failure string
}

func (*failureTB) Helper() {}
func (f *failureTB) Fatalf(format string, args ...any) {
	f.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// alive reports whether process pid runs: it has a /proc entry and is not
// a zombie (an orphan's exit status waits for whoever adopted it).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] != 'Z'
}
