package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// The main job on a real SQS-compatible server: the worker binary, pointed
// at a queue with a redrive policy, enqueues its jobs (-send), processes
// them, and prints the same summary as on the in-memory mailbox: every
// normal job acked, multi-entry extension batches, the stuck job's lease
// lost and the job redelivered, the failing job dead-lettered.
func TestWorkerOnSQS(t *testing.T) {
	t.Parallel()
	h := sqsServerHarness(t)
	srv := sqsServer(t)
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: 2 * time.Second, MaxReceiveCount: 3})
	defer cleanup()
	url := q.Mailbox.(*sqsmailbox.Mailbox).QueueURL()

	dir := t.TempDir()
	for i := range 12 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("file", i)), bytes.Repeat([]byte{byte('a' + i)}, 4096*(i+1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "worker")
	// Built in the library's module, with its go.mod, as a user builds it.
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./examples/worker")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-endpoint", srv.Endpoint, "-queue-url", url, "-send",
		"-dir", dir, "-slow", "50ms", "-chunks", "48", "-concurrency", "8")
	cmd.Env = append(os.Environ(), "AWS_REGION="+srv.Region)
	if srv.staticCreds {
		cmd.Env = append(cmd.Env, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_SESSION_TOKEN=")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("worker: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	t.Logf("worker on %s:\n%s", h.Name(), out)

	_, summary, ok := strings.Cut(out, "sqsloop worker summary")
	if !ok {
		t.Fatalf("no summary:\n%s", out)
	}
	field := func(pattern string) int {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(summary)
		if m == nil {
			t.Fatalf("summary lacks %q:\n%s", pattern, out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if n := field(`jobs enqueued\s+(\d+)`); n != 14 {
		t.Errorf("jobs enqueued %d, want 14", n)
	}
	if n := field(`acked\s+(\d+) \(every normal job acked: yes\)`); n != 13 {
		t.Errorf("acked %d, want 13 (12 files and the stuck job)", n)
	}
	if n := field(`largest batch: (\d+) entries`); n < 2 {
		t.Errorf("largest extension batch %d, want > 1", n)
	}
	if n := field(`leases lost\s+(\d+)`); n < 1 {
		t.Errorf("leases lost %d, want the stuck job's", n)
	}
	if n := field(`redelivered\s+(\d+)`); n < 1 {
		t.Errorf("redelivered %d, want ≥ 1", n)
	}
	if n := field(`dead-lettered\s+(\d+)`); n != 1 {
		t.Errorf("dead-lettered %d, want the failing job", n)
	}
	if !regexp.MustCompile(`queue drained\s+yes`).MatchString(summary) {
		t.Errorf("the queue was not drained")
	}
}
