// Package childproc starts the running test binary again as a child
// process of a test (a consumer, a sender, a lock holder), for tests that
// kill processes, and reads its output line by line as it comes, so that a
// child is never stalled on a full pipe. The child's TestMain recognizes
// the environment variable the test sets and runs its role instead of the
// tests, reporting with Say and Failed.
//
// A child does not outlive its parent: Start holds a pipe on the child's
// standard input, and in the child this package's init, seeing the
// variable Start sets, exits the process (status 3) when that pipe reaches
// end of file, which it does when the parent dies however it dies (a
// SIGKILL, a panic, go test's timeout). Test support: only _test.go files
// import it (sqlmailbox's and the integration module's).
package childproc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"
)

// parentEnv is set in a child's environment by Start: the child's standard
// input is a pipe its parent holds.
const parentEnv = "SQSLOOP_CHILDPROC_PARENT_PIPE=1"

// orphaned is the exit status of a child whose parent has died.
const orphaned = 3

func init() {
	if !slices.Contains(os.Environ(), parentEnv) {
		return
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // returns at end of file: the parent is gone
		os.Exit(orphaned)
	}()
}

// Child is a running child process.
type Child struct {
	// Cmd is the process; Cmd.Process.Kill sends SIGKILL.
	Cmd *exec.Cmd
	// Lines yields its standard output, line by line; it is closed when the
	// output ends. Within reads it with a deadline.
	Lines chan string
	// Exited yields Wait's result once the output has ended.
	Exited chan error

	mu     sync.Mutex
	stderr bytes.Buffer
}

// Start starts the test binary with env ("NAME=value") added to its
// environment and no test selected (-test.run=^$, so a binary that ignored
// env would do nothing). The child exits when this process dies (see the
// package's doc); the end of the test kills it if it still runs.
func Start(t testing.TB, env string) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), parentEnv, env)
	c := &Child{Cmd: cmd, Lines: make(chan string, 1024), Exited: make(chan error, 1)}
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.stderr.Write(p)
	})
	// Never written; cmd holds it until Wait, and it closes when this
	// process dies.
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
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

// Within yields the child's lines as they come, to the end of its output
// (or until the loop stops); it fails t (Fatalf, with the child's standard
// error) when the output has not ended d after the call. Use it in place of
// ranging over Lines, which waits for ever on a child that hangs.
func (c *Child) Within(t testing.TB, d time.Duration) iter.Seq[string] {
	deadline := time.NewTimer(d)
	return func(yield func(string) bool) {
		t.Helper()
		defer deadline.Stop()
		read := 0
		for {
			select {
			case line, ok := <-c.Lines:
				if !ok || !yield(line) {
					return
				}
				read++
			case <-deadline.C:
				t.Fatalf("the child still running %v later, after %d lines; stderr:\n%s", d, read, c.Stderr())
			}
		}
	}
}

// Expect reads lines until one equals want, failing t if the output ends or
// d passes first.
func (c *Child) Expect(t testing.TB, want string, d time.Duration) {
	t.Helper()
	for line := range c.Within(t, d) {
		if line == want {
			return
		}
	}
	t.Fatalf("the child ended before %q; stderr:\n%s", want, c.Stderr())
}

// Rest reads the remaining lines, failing t if the output has not ended
// within d, and returns them with Wait's result.
func (c *Child) Rest(t testing.TB, d time.Duration) ([]string, error) {
	t.Helper()
	lines := slices.Collect(c.Within(t, d))
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
