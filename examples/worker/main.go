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
// With -metrics-addr it serves its health probes (/livez, /readyz) and the
// lease page (/debug/sqsloop). The same job has programs of its own on a
// database (examples/sqlworker, -mailbox) and with OpenTelemetry metrics and
// spans (examples/otelworker, -trace), so that this one compiles neither a
// database driver nor the OpenTelemetry SDK: `go run ./examples/worker`
// builds about as fast as a program that only uses the AWS SDK's SQS client.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/sqsloop/sqsloop/examples/internal/worker"
	"github.com/sqsloop/sqsloop/lifecycle"
)

// options are the worker's flags.
type options struct {
	worker.Options
	sqs worker.SQS
}

// moved are the flags of the job that other programs have, with the
// command to run instead.
var moved = map[string]string{
	"mailbox": "the jobs in a database are a program of their own: go run ./examples/sqlworker -mailbox sqlite:jobs.db",
	"trace":   "OpenTelemetry spans and metrics are a program of their own: go run ./examples/otelworker -trace stdout (-metrics-addr for /metrics)",
}

// errMoved is parse's error for a flag in moved.
var errMoved = errors.New("moved")

// parse reads the worker's flags from args. A flag in moved fails it with
// one line, saying which program to run; other bad flags with the flag
// package's message and the usage, written to stderr.
func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	o.Flags(fs)
	o.sqs.Flags(fs)
	var seen string
	for name, instead := range moved {
		// A boolean flag, so that the error comes at the flag, with a
		// value or without.
		fs.BoolFunc(name, "moved: "+instead, func(string) error {
			seen = fmt.Sprintf("-%s: %s", name, instead)
			return errMoved
		})
	}
	var usage strings.Builder // the flag package's messages, dropped for a moved flag
	fs.SetOutput(&usage)
	err := fs.Parse(args)
	switch {
	case seen != "":
		fmt.Fprintln(stderr, "worker:", seen)
		return o, errMoved
	case err != nil:
		_, _ = io.WriteString(stderr, usage.String())
	}
	return o, err
}

// run opens the queue o names and runs the job on it.
func (o options) run(ctx context.Context, group *lifecycle.LoopGroup, out io.Writer, log *slog.Logger) (worker.Summary, error) {
	q, err := o.sqs.Open(ctx)
	if err != nil {
		return worker.Summary{}, err
	}
	defer q.Close()
	return worker.Run(ctx, worker.Config{Options: o.Options, Queue: q, Enqueue: o.sqs.Enqueue()}, group, out, log)
}

func main() {
	o, err := parse(os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		os.Exit(2)
	}
	worker.Main("worker", o.run)
}
