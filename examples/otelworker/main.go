// Command otelworker is sqsloop's main job (examples/worker, in memory and
// on SQS, with the same flags) observed with OpenTelemetry through package
// otelsqsloop: with -metrics-addr package telemetry serves the metrics for
// Prometheus (/metrics) beside the probes and the lease page, and with
// -trace stdout it prints the spans on standard output.
//
// It is a program of its own so that the main job compiles no
// OpenTelemetry SDK, exporter or Prometheus client.
package main

import (
	"context"
	"flag"
	"io"
	"log/slog"

	"github.com/sqsloop/sqsloop/examples/internal/worker"
	"github.com/sqsloop/sqsloop/lifecycle"
)

// options are the program's flags.
type options struct {
	worker.Options
	sqs   worker.SQS
	trace string // "stdout": print spans; "": none
}

// run opens the queue o names, starts the telemetry o asks for, and runs
// the job on it.
func (o options) run(ctx context.Context, group *lifecycle.LoopGroup, out io.Writer, log *slog.Logger) (worker.Summary, error) {
	q, err := o.sqs.Open(ctx)
	if err != nil {
		return worker.Summary{}, err
	}
	defer q.Close()
	observer, flush, err := startTelemetry(o, q, group, out)
	if err != nil {
		return worker.Summary{}, err
	}
	defer flush()
	job := o.Options
	job.MetricsAddr = "" // served by package telemetry
	return worker.Run(ctx, worker.Config{Options: job, Queue: q, Enqueue: o.sqs.Enqueue(), Observer: observer}, group, out, log)
}

func main() {
	var o options
	o.Flags(flag.CommandLine, "Prometheus metrics ("+metricsPath+")")
	o.sqs.Flags(flag.CommandLine)
	flag.StringVar(&o.trace, "trace", "", "stdout: print the OpenTelemetry spans on standard output")
	flag.Parse()
	worker.Main("otelworker", o.run)
}
