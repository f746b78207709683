// Package childproc starts the running test binary again as a child
// process of a test (a consumer, a sender, a lock holder), for tests that
// kill processes, and reads its output line by line as it comes, so that a
// child is never stalled on a full pipe. The child's TestMain recognizes
// the environment variable the test sets and runs its role instead of the
// tests, reporting with Say and Failed. Test support: only _test.go files
// import it (sqlmailbox's and the integration module's).
package childproc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Child is a running child process.
type Child struct {
	// Cmd is the process; Cmd.Process.Kill sends SIGKILL.
	Cmd *exec.Cmd
	// Lines yields its standard output, line by line; it is closed when the
	// output ends.
	Lines chan string
	// Exited yields Wait's result once the output has ended.
	Exited chan error

	mu     sync.Mutex
	stderr bytes.Buffer
}

// Start starts the test binary with env ("NAME=value") added to its
// environment and no test selected (-test.run=^$, so a binary that ignored
// env would do nothing). The end of the test kills it if it still runs.
func Start(t testing.TB, env string) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	c := &Child{Cmd: cmd, Lines: make(chan string, 1024), Exited: make(chan error, 1)}
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.stderr.Write(p)
	})
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.Lines <- sc.Text()
		}
		close(c.Lines)
		c.Exited <- cmd.Wait() // after the output has been read to its end, as Wait wants
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // no-op once it has exited
		for range c.Lines {
		}
	})
	return c
}

// Stderr returns what the child has written to standard error so far.
func (c *Child) Stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// Expect reads lines until one equals want, failing t if the output ends or
// d passes first.
func (c *Child) Expect(t testing.TB, want string, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case line, ok := <-c.Lines:
			if !ok {
				t.Fatalf("the child ended before %q; stderr:\n%s", want, c.Stderr())
			}
			if line == want {
				return
			}
		case <-timeout:
			t.Fatalf("no %q from the child within %v; stderr:\n%s", want, d, c.Stderr())
		}
	}
}

// Rest reads the remaining lines and Wait's result.
func (c *Child) Rest() ([]string, error) {
	var lines []string
	for line := range c.Lines {
		lines = append(lines, line)
	}
	return lines, <-c.Exited
}

// Say writes one line to standard output, for the parent to read (format
// and args as for fmt.Printf, without the newline): whole, even when
// goroutines of the child say lines at once. Safe for concurrent use.
func Say(format string, args ...any) {
	sayMu.Lock()
	defer sayMu.Unlock()
	fmt.Printf(format+"\n", args...)
}

var sayMu sync.Mutex

// Failed writes err to standard error ("child: " and err) and returns 2,
// the exit code of a child that could not play its role.
func Failed(err error) int {
	fmt.Fprintln(os.Stderr, "child:", err)
	return 2
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
