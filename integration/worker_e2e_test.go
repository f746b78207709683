package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// The main job on a real SQS-compatible server, both ways to give it a
// queue: set up by the worker on -endpoint (sqsmailbox.CreateQueue, with
// its dead-letter queue), and an existing one with a redrive policy named
// by -queue-url with -send. The worker binary enqueues its jobs with the
// producer (JSON, plus one malformed job), processes them, and prints the
// same summary as on the in-memory mailbox: every normal job acked,
// multi-entry extension batches, the stuck job's lease lost and the job
// redelivered, the failing job dead-lettered, the malformed one moved to
// the dead-letter queue on its first delivery; its summary gives the
// maxReceiveCount of the queue's redrive policy (3 on the queue it sets
// up, 4 on the other). The first way runs examples/worker, the second
// examples/otelworker (the same job) with -trace stdout, whose spans name
// that queue (messaging.destination.name, aws.sqs.queue.url), not the
// in-memory default "jobs".
func TestWorkerOnSQS(t *testing.T) {
	t.Parallel()
	h := sqsServerHarness(t)
	srv := sqsServer(t)
	dir := t.TempDir()
	for i := range 12 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("file", i)), bytes.Repeat([]byte{byte('a' + i)}, 4096*(i+1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bins := map[bool]string{true: buildExample(t, "worker"), false: buildExample(t, "otelworker")}
	for _, setup := range []bool{true, false} {
		t.Run(map[bool]string{true: "queue set up by the worker", false: "queue-url and send"}[setup], func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			args := []string{"-endpoint", srv.Endpoint}
			name, maxReceives := "", 3
			if setup {
				var r [4]byte
				_, _ = rand.Read(r[:])
				name = "sqsloop-worker-" + hex.EncodeToString(r[:])
				args = append(args, "-queue", name)
				t.Cleanup(func() { deleteQueues(t, srv, name, name+sqsloop.DeadLetterSuffix) })
			} else {
				maxReceives = 4
				q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: 2 * time.Second, MaxReceiveCount: maxReceives})
				defer cleanup()
				url := q.Mailbox.(*sqsmailbox.Mailbox).QueueURL()
				name = path.Base(url)
				args = append(args, "-queue-url", url, "-send", "-trace", "stdout")
			}
			runWorker(t, h.Name(), bins[setup], srv, name, maxReceives, append(args, "-dir", dir, "-slow", "50ms", "-chunks", "48", "-concurrency", "8"))
		})
	}
}

// runWorker runs the worker binary with args on srv, and checks its
// summary (the redrive policy's maxReceives) and, with -trace stdout among
// args, that its spans name the queue called queue.
func runWorker(t *testing.T, name, bin string, srv *SQSServer, queue string, maxReceives int, args []string) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
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
	t.Logf("worker on %s (spans left out):\n%s", name, regexp.MustCompile(`(?m)^\{.*\n`).ReplaceAllString(out, ""))

	if slices.Contains(args, "-trace") {
		checkSpans(t, out, queue)
	}

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
	if n := field(`jobs enqueued\s+(\d+) \(12 files, 1 stuck, 1 failing, 1 malformed\)`); n != 15 {
		t.Errorf("jobs enqueued %d, want 15", n)
	}
	if n := field(`acked\s+(\d+) \(every normal job acked: yes\)`); n != 14 {
		t.Errorf("acked %d, want 14 (12 files, the stuck job, the malformed one after its copy)", n)
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
	if n := field(`dead-lettered\s+\d+ \(by the redrive policy, after (\d+) receives\)`); n != maxReceives {
		t.Errorf("dead-lettered after %d receives, says the summary; the queue's maxReceiveCount is %d", n, maxReceives)
	}
	if n := field(`poison\s+(\d+) moved to the dead-letter queue at once \(receive counts: 1\)`); n != 1 {
		t.Errorf("poison %d, want the malformed job, on its first delivery", n)
	}
	if !regexp.MustCompile(`queue drained\s+yes`).MatchString(summary) {
		t.Errorf("the queue was not drained")
	}
}

// checkSpans checks that the spans printed in out (-trace stdout) name the
// queue called queue.
func checkSpans(t *testing.T, out, queue string) {
	t.Helper()
	attr := func(key string) []string {
		var vals []string
		for _, m := range regexp.MustCompile(`"Key":\s*"`+regexp.QuoteMeta(key)+`",\s*"Value":\s*\{\s*"Type":\s*"STRING",\s*"Value":\s*"([^"]*)"`).FindAllStringSubmatch(out, -1) {
			vals = append(vals, m[1])
		}
		return vals
	}
	names, urls := attr("messaging.destination.name"), attr("aws.sqs.queue.url")
	if len(names) == 0 || len(urls) == 0 {
		t.Errorf("%d spans with messaging.destination.name, %d with aws.sqs.queue.url: want every span to name the queue", len(names), len(urls))
	}
	for _, n := range names {
		if n != queue {
			t.Errorf("a span's messaging.destination.name is %q, want %q", n, queue)
			break
		}
	}
	for _, u := range urls {
		if path.Base(u) != queue {
			t.Errorf("a span's aws.sqs.queue.url is %q, want the URL of %q", u, queue)
			break
		}
	}
	if !strings.Contains(out, `"Name":"process `+queue+`"`) {
		t.Errorf("no span named %q", "process "+queue)
	}
}

// deleteQueues deletes the queues named on srv, if they exist.
func deleteQueues(t *testing.T, srv *SQSServer, names ...string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 10*time.Second)
	defer cancel()
	client, err := srv.NewClient(ctx)
	if err != nil {
		t.Logf("deleting queues: %v", err)
		return
	}
	for _, n := range names {
		out, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(n)})
		if err == nil {
			_, err = client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
		}
		if err != nil {
			t.Logf("deleting queue %s: %v", n, err)
		}
	}
}
