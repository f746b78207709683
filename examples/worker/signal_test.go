//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// startWorker starts the worker as a process of its own (the test binary,
// see TestMain) on 40 files, with args, and returns once the worker has
// printed its first progress line: its LoopGroup then handles signals and
// its handlers are mid-job. wait reads the rest of the worker's output and
// waits for it to exit.
func startWorker(t *testing.T, args ...string) (cmd *exec.Cmd, wait func() (stdout string, err error)) {
	t.Helper()
	dir := t.TempDir()
	for i := range 40 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("f", i)), bytes.Repeat([]byte("x"), 4096), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd = exec.Command(os.Args[0], append([]string{"-dir", dir, "-concurrency", "8"}, args...)...)
	cmd.Env = append(os.Environ(), workerProcessEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	r := bufio.NewReader(pipe)
	var out strings.Builder
	for {
		line, err := r.ReadString('\n')
		out.WriteString(line)
		if strings.HasPrefix(line, "[") {
			break
		}
		if err != nil {
			_ = cmd.Wait()
			t.Fatalf("the worker ended before its first progress line: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
		}
	}
	return cmd, func() (string, error) {
		rest, _ := io.ReadAll(r)
		out.Write(rest)
		err := cmd.Wait()
		if stderr.Len() > 0 {
			t.Logf("worker's stderr:\n%s", stderr.String())
		}
		return out.String(), err
	}
}

// SIGTERM, as a deploy sends it, drains the worker for real (os/signal, the
// zero LoopGroup, the consumer's drain): the jobs under way finish and are
// acked, the others stay in the queue, and the worker prints its summary
// and exits 0 (a drain that ran out of its budget would exit 1 with
// consumer.ErrDrainTimeout).
func TestWorkerDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	cmd, wait := startWorker(t, "-slow", "50ms", "-chunks", "48")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	out, err := wait()
	if err != nil {
		t.Fatalf("worker: %v, want exit 0 after its drain\n%s", err, out)
	}
	_, sum, ok := strings.Cut(out, "sqsloop worker summary")
	if !ok {
		t.Fatalf("no summary:\n%s", out)
	}
	if !strings.Contains(sum, "queue drained     NO") {
		t.Fatalf("the queue drained before the SIGTERM; make the jobs longer:\n%s", out)
	}
	m := regexp.MustCompile(`acked\s+(\d+) \(`).FindStringSubmatch(sum)
	if m == nil {
		t.Fatalf("summary lacks the acked line:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n == 0 || n >= 42 {
		t.Errorf("acked %d: want the jobs under way at the SIGTERM, not all 42\n%s", n, out)
	}
}

// A second signal during the drain exits at once, as users expect from
// Ctrl+C twice: jobs of 48 s outlast the worker's 10 s drain budget, so
// without the second signal the worker would print its summary and exit 1;
// with it, it exits with 128 + the signal's number and prints nothing more.
func TestWorkerSecondSignalExitsAtOnce(t *testing.T) {
	t.Parallel()
	cmd, wait := startWorker(t, "-slow", "1s", "-chunks", "48")
	// Two different signals, so that the kernel cannot merge them into one.
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	out, err := wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("worker: %v, want an exit status\n%s", err, out)
	}
	// The kernel may hand both over at once, in either order: whichever
	// the LoopGroup gets second sets the status.
	if code := exit.ExitCode(); code != 130 && code != 143 {
		t.Errorf("exit status %d, want 130 (SIGINT second) or 143 (SIGTERM second)\n%s", code, out)
	}
	if strings.Contains(out, "sqsloop worker summary") {
		t.Errorf("the worker drained and printed its summary instead of exiting at once:\n%s", out)
	}
}
