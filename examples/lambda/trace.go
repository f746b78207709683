package main

import (
	"errors"
	"io"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/otelsqsloop"
)

// tracing returns the Observer of TRACE=stdout: OpenTelemetry spans of
// every record run (and, with LEASES=on, of the lease owner's batch calls)
// written to out as JSON (CloudWatch Logs, on Lambda), for the queue at
// queueURL.
func tracing(queueURL string, out io.Writer) (sqsloop.Observer, error) {
	if queueURL == "" {
		return nil, errors.New("TRACE=stdout needs QUEUE_URL, the URL of the queue the spans name")
	}
	exp, err := stdouttrace.New(stdouttrace.WithWriter(out))
	if err != nil {
		return nil, err
	}
	// A syncer, not a batcher: each span is written as it ends, so that an
	// invocation's spans are out before it answers and Lambda freezes the
	// environment.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	return otelsqsloop.New(otelsqsloop.Config{QueueURL: queueURL, TracerProvider: tp})
}
