// Command service is a day-two service of JSON jobs, written as a user of
// the library writes one: every piece of it is the library's, configured.
//
// It enqueues -send jobs with the batching producer, runs each once per
// job ID (the idempotency middleware, its keys in the -state store), beats
// the heartbeat at every step so a job's lease lasts while it makes
// progress, serves on -addr the Prometheus metrics (/metrics: the queue's
// backlog, in-flight and dead-letter depth, the recommended consumers, the
// handler runs, the idempotency counters), the probes (/livez, /readyz),
// the lease page (/debug/sqsloop) and drain mode (POST /drain, /resume),
// and drains on SIGTERM or SIGINT within 30 s, losing nothing.
//
// The queue is any the library opens from a URL (-queue):
//
//	go run ./examples/service                                  # mem://jobs: in this process
//	go run ./examples/service -queue 'sqlite:jobs.db?queue=jobs' -state sqlite:jobs-state.db
//	go run ./examples/service -queue 'postgres://app@db/app?queue=jobs' -state 'postgres://app@db/app'
//	go run ./examples/service -queue https://sqs.eu-west-1.amazonaws.com/123456789012/jobs -state dynamodb://jobs-state
//
// A queue in a database or on SQS must exist (sqsloop create-queue
// --mailbox sqlite:jobs.db --queue jobs --max-receive-count 5); a
// PostgreSQL database must be migrated (sqsloop migrate, pgstate.Migrate).
// After a restart, run with -send 0 to finish what the last run left.
package main

import (
	"context"
	"flag"
	"log"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/jobstate"
	_ "github.com/sqsloop/sqsloop/jobstate/dynamostore" // dynamodb://TABLE
	_ "github.com/sqsloop/sqsloop/jobstate/pgstate"     // postgres://…
	_ "github.com/sqsloop/sqsloop/jobstate/sqlitestate" // sqlite:FILE
	"github.com/sqsloop/sqsloop/lifecycle"
	_ "github.com/sqsloop/sqsloop/memmailbox" // mem://NAME
	"github.com/sqsloop/sqsloop/producer"
	_ "github.com/sqsloop/sqsloop/sqlmailbox/postgres" // postgres://…?queue=NAME
	_ "github.com/sqsloop/sqsloop/sqlmailbox/sqlite"   // sqlite:FILE?queue=NAME
	_ "github.com/sqsloop/sqsloop/sqsmailbox"          // SQS queue URLs, sqs://NAME
	"github.com/sqsloop/sqsloop/telemetry"
)

// The flags.
var (
	queueURL    = flag.String("queue", "mem://jobs?max_receive_count=5", "the queue's URL: mem://NAME, sqlite:FILE?queue=NAME, postgres://…?queue=NAME, an SQS queue URL or sqs://NAME")
	stateURL    = flag.String("state", "mem://", "the idempotency keys' store: mem://, sqlite:FILE, postgres://…, dynamodb://TABLE")
	addr        = flag.String("addr", "127.0.0.1:9464", "where to serve the metrics, the probes, the lease page and drain mode")
	send        = flag.Int("send", 500, "jobs to enqueue as it starts")
	concurrency = flag.Int("concurrency", 16, "jobs run at once")
)

// Job is one job: Steps steps of StepTime each.
type Job struct {
	ID       int           `json:"id"`
	Steps    int           `json:"steps"`
	StepTime time.Duration `json:"step_time"`
}

func main() {
	flag.Parse()
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// run runs the service until a signal (or ctx) drains it.
func run(ctx context.Context) error {
	mb, err := sqsloop.OpenMailbox(ctx, *queueURL)
	if err != nil {
		return err
	}
	defer mb.Close()
	state, err := jobstate.Open(ctx, *stateURL)
	if err != nil {
		return err
	}
	defer state.Close()
	idem, err := idempotency.New(state, idempotency.Config{Queue: "jobs"})
	if err != nil {
		return err
	}
	if err := enqueue(ctx, mb, *send); err != nil {
		return err
	}
	group := &lifecycle.LoopGroup{GracePeriod: 30 * time.Second} // SIGTERM, SIGINT: drain within it
	tel, err := telemetry.Start(group, telemetry.Config{Addr: *addr, Queue: "jobs", Idempotency: idem})
	if err != nil {
		return err
	}
	c, err := consumer.New(mb, consumer.JSONHandler(handle), consumer.Config{
		Concurrency: *concurrency,
		Middleware:  []sqsloop.Middleware{idem.Middleware},
		Observer:    tel.Observer(),
	})
	if err != nil {
		return err
	}
	if err := group.Add("jobs", c); err != nil {
		return err
	}
	log.Print("serving ", tel)
	err = group.Run(ctx)
	log.Printf("stopped: %+v", idem.Stats())
	return err
}

// enqueue sends n jobs, in batches of 10.
func enqueue(ctx context.Context, mb sqsloop.Mailbox, n int) error {
	p, err := producer.New(mb, producer.Config{})
	if err != nil {
		return err
	}
	defer p.Close(ctx)
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{ID: i, Steps: 5, StepTime: 20 * time.Millisecond}
	}
	_, err = producer.SendAllJSON(ctx, p, jobs, sqsloop.OutgoingMessage{})
	return err
}

// handle runs one job; each step done is a beat, which keeps its lease.
func handle(ctx context.Context, _ *sqsloop.Message, job Job) error {
	for range job.Steps {
		time.Sleep(job.StepTime) // a step of the job's work
		heartbeat.Beat(ctx)
	}
	return nil
}
