// Command worker is sqsloop's main job: it consumes a queue of file jobs,
// hashing each file with SHA-256 while beating its heartbeat, and prints
// progress and a summary.
//
// With no flags it runs on an embedded in-memory mailbox: one job per file
// under -dir (default: the current directory, the repository when run as
// `go run ./examples/worker` from its root), plus one job that gets stuck
// (stops beating, so its lease lapses and the job is redelivered) and one
// that always fails (so it is dead-lettered after its max receive count).
// Leases are short (2 s) so extensions visibly happen. It exits 0 once the
// queue is drained; Ctrl+C drains gracefully, twice exits at once.
//
// The jobs are JSON (producer.JSONBody, consumer.JSONHandler), enqueued with a
// producer; one more is not JSON at all, a poison message that the
// consumer moves to the dead-letter queue on its first delivery.
//
// With -endpoint (LocalStack, ElasticMQ or an emulator) it sets up the
// queue -queue there, with its dead-letter queue (sqsmailbox.CreateQueue),
// and runs the same jobs on it. With -queue-url it consumes that SQS queue
// instead (credentials and region from the standard AWS environment), and
// -send enqueues the same jobs there first; give that queue a redrive policy
// to see the failing job dead-lettered.
//
// With -mailbox sqlite:jobs.db (or -mailbox postgres://…) the jobs live in a
// database (package sqlmailbox): the queue and its dead-letter queue are
// created on first use, and the jobs enqueued when the queue is empty. A
// run interrupted (Ctrl+C, or killed) leaves the rest in the database; the
// next run says how many it found waiting and finishes them.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/sqsloop/sqsloop/lifecycle"
)

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", ".", "directory whose files become jobs (skips .git and node_modules)")
	flag.DurationVar(&o.slow, "slow", 50*time.Millisecond, "delay per chunk read, so jobs outlive their 2 s lease")
	flag.IntVar(&o.chunks, "chunks", 48, "chunks each file is read in (each beats the heartbeat)")
	flag.IntVar(&o.concurrency, "concurrency", 32, "handlers at once")
	flag.DurationVar(&o.progress, "progress", time.Second, "how often to print progress (0: never)")
	flag.StringVar(&o.queueURL, "queue-url", "", "consume this SQS queue instead of the in-memory one (AWS credentials and region from the environment)")
	flag.StringVar(&o.endpoint, "endpoint", "", "base URL of an SQS-compatible server (LocalStack, ElasticMQ, fauxqs); empty: AWS. Without -queue-url: set up -queue there and use it")
	flag.StringVar(&o.queue, "queue", "jobs", "with -endpoint and no -queue-url: the queue to set up (with its dead-letter queue, NAME-dlq) and enqueue the jobs in")
	flag.BoolVar(&o.send, "send", false, "with -queue-url: enqueue the jobs of -dir first")
	flag.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics ("+metricsPath+"), the health probes (/livez, /readyz) and the lease page ("+leasesPath+") on this address, e.g. 127.0.0.1:9464")
	flag.StringVar(&o.trace, "trace", "", "stdout: print the OpenTelemetry spans on standard output")
	flag.StringVar(&o.mailbox, "mailbox", "", "keep the jobs in a database instead of memory: sqlite:PATH or a postgres:// URL (an interrupted run's jobs are finished by the next)")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var group lifecycle.LoopGroup // SIGTERM/SIGINT drain; a second one exits at once
	sum, err := run(context.Background(), o, &group, os.Stdout, log)
	if sum.ran {
		sum.print(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}
