// Package readme holds the README's Go snippets, each in a function that
// gives it what it names (a context, a mailbox, a handler), so that they
// compile with the library as it is: TestEverySnippetCompiles fails when a
// snippet of README.md is in none of them. A snippet added to the README
// gets its frame here.
package readme

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/producer"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
	"github.com/sqsloop/sqsloop/sqslambda"
	"github.com/sqsloop/sqsloop/sqsmailbox"
	"github.com/sqsloop/sqsloop/telemetry"
)

// Resize is the quick start's job.
type Resize struct{ Sizes []int }

// Steps are the job's steps.
func (Resize) Steps() []func(context.Context) error { return nil }

// Render is the long job's job: Frames frames to draw.
type Render struct{ Frames int }

// Draw draws one frame.
func (Render) Draw(int) {}

// "A service (ECS, EC2, Kubernetes)".
func quickStart(ctx context.Context, queueURL string) error {
	client, err := sqsmailbox.NewClient(ctx, "") // the standard AWS chain; or "http://127.0.0.1:4566"
	mailbox, err := sqsmailbox.New(client, queueURL)

	handler := consumer.JSONHandler(func(ctx context.Context, m *sqsloop.Message, job Resize) error {
		for _, step := range job.Steps() {
			if err := step(ctx); err != nil {
				return err // nacked with the retry back-off; sqsloop.Permanent(err) dead-letters at once
			}
			heartbeat.Beat(ctx) // proof of progress: the lease is extended only while beats come
		}
		return nil // acked
	})
	c, err := consumer.New(mailbox, handler, consumer.Config{Concurrency: 16})
	if err != nil {
		return err // names every bad field and its allowed range
	}

	group := &lifecycle.LoopGroup{GracePeriod: 30 * time.Second} // SIGTERM/SIGINT drain within it
	_ = group.Add("resize", c)
	health := &http.Server{Addr: "127.0.0.1:8081", Handler: group.HealthHandler(), ReadHeaderTimeout: 5 * time.Second}
	_ = group.Add("probes", lifecycle.HTTPServer(health, nil), lifecycle.LoopOption{Last: true}) // /livez, /readyz through the drain
	return group.Run(ctx)
}

// Sending many messages.
func send(ctx context.Context, mailbox sqsloop.Mailbox, jobs []Resize) {
	p, err := producer.New(mailbox, producer.Config{})
	defer p.Close(ctx)                                                            // sends what is pending
	results, err := producer.SendAllJSON(ctx, p, jobs, sqsloop.OutgoingMessage{}) // batches of ≤ 10; err: *producer.BatchError
	_, _ = results, err
}

// "AWS Lambda".
func lambdaMain(handler sqsloop.Handler, client *sqs.Client) {
	h, err := sqslambda.New(handler, sqslambda.Config{
		OpenQueue: func(queueURL string) (sqslambda.Queue, error) { // optional: leases, back-off, DLQ for poison
			return sqsmailbox.New(client, queueURL)
		},
	})
	lambda.Start(h.Handle)
	_ = err
}

// "A database instead of SQS".
func database(ctx context.Context, handler sqsloop.Handler) {
	db, err := sqlite.Open(ctx, "jobs.db", sqlite.Options{}) // a *sqlmailbox.Store: the queues of one database; or postgres.New after postgres.Migrate
	defer db.Close()
	jobs, err := db.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 5}) // and jobs-dlq; idempotent
	c, err := consumer.New(jobs, handler, consumer.Config{})
	_, _ = c, err
}

// "Long jobs: resume, don't redo".
func longJobs(ctx context.Context, mailbox sqsloop.Mailbox) {
	state, err := jobstate.Open(ctx, "sqlite:state.db")                    // a jobstate.Store (not sqlmailbox's): mem://, sqlite:, postgres://…, dynamodb://TABLE
	cp, err := checkpoint.New(state, checkpoint.Config{Queue: "jobs"})     // progress saved by the handler, read on a redelivery
	idem, err := idempotency.New(state, idempotency.Config{Queue: "jobs"}) // a job whose ack was lost is not run again
	render := consumer.JSONHandler(func(ctx context.Context, m *sqsloop.Message, job Render) error {
		frame := 0
		if _, err := checkpoint.LoadJSON(ctx, &frame); err != nil { // the frame to start at: 0 on a first delivery
			return err
		}
		for ; frame < job.Frames; frame++ {
			job.Draw(frame)
			if err := checkpoint.SaveJSON(ctx, frame+1); err != nil { // saved, and a heartbeat
				return err
			}
		}
		return nil
	})
	c, err := consumer.New(mailbox, render, consumer.Config{Middleware: []sqsloop.Middleware{idem.Middleware, cp.Middleware}})
	_, _ = c, err
}

// "Day two: configuration from URLs, telemetry in one call".
func dayTwo(ctx context.Context, queueURL *string, handler sqsloop.Handler) {
	mailbox, err := sqsloop.OpenMailbox(ctx, *queueURL) // mem://jobs, sqlite:jobs.db?queue=jobs, postgres://…?queue=jobs, https://sqs.…/jobs, sqs://jobs
	group := &lifecycle.LoopGroup{GracePeriod: 30 * time.Second}
	tel, err := telemetry.Start(group, telemetry.Config{Addr: ":9464", Queue: "jobs"}) // /metrics, /livez, /readyz, /debug/sqsloop, /drain
	c, err := consumer.New(mailbox, handler, consumer.Config{Observer: tel.Observer()})
	_, _ = c, err
}

// The frames are compiled, never run: they would reach SQS and listen.
var _ = []any{quickStart, send, lambdaMain, database, longJobs, dayTwo}

// normalized is s's lines without their indentation, every run of spaces
// one space: a snippet is the same in the README and in its frame
// whatever gofmt aligns.
func normalized(s string) []string {
	var lines []string
	for l := range strings.Lines(s) {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return lines
}

// snippets returns the Go code blocks of the Markdown file at path.
func snippets(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```go"):
			cur = &strings.Builder{}
		case cur != nil && strings.HasPrefix(line, "```"):
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// Every Go snippet of the README is, line for line, in a frame above, so
// it compiles (this package does) and cannot drift from the library.
func TestEverySnippetCompiles(t *testing.T) {
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	frames := normalized(string(src))
	blocks := snippets(t, "../../README.md")
	if len(blocks) < 6 {
		t.Fatalf("README.md has %d Go snippets; the check reads the wrong file", len(blocks))
	}
	for i, b := range blocks {
		want := normalized(b)
		found := false
		for at := range frames {
			if at+len(want) <= len(frames) && slices.Equal(frames[at:at+len(want)], want) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md's Go snippet %d is in no frame of internal/readme/readme_test.go (add it, in a function giving it what it names):\n%s", i+1, b)
		}
	}
}
