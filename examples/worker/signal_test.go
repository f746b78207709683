//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/sqsloop/sqsloop/examples/internal/worker/workertest"
)

// startWorker starts the worker as a process of its own on 40 files, with
// args, once it is mid-job (workertest.Start).
func startWorker(t *testing.T, args ...string) (cmd *exec.Cmd, wait func() (stdout string, err error)) {
	t.Helper()
	return workertest.Start(t, append([]string{"-dir", workertest.Files(t, 40, "f")}, args...)...)
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
