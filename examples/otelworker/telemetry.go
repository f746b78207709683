package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/examples/internal/worker"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/otelsqsloop"
	"github.com/sqsloop/sqsloop/telemetry"
)

// metricsPath is where -metrics-addr serves the metrics.
const metricsPath = telemetry.MetricsPath

// startTelemetry sets up what o asks for, for q, and returns the
// consumer's Observer (nil: nothing observes) and what flushes the spans:
// with -trace stdout, spans printed on out (the global tracer provider);
// with -metrics-addr, package telemetry's server in group (the metrics for
// Prometheus, the probes, the lease page, drain mode), which says where
// it serves on out.
func startTelemetry(o options, q *worker.Queue, group *lifecycle.LoopGroup, out io.Writer) (sqsloop.Observer, func(), error) {
	flush := func() {}
	switch o.trace {
	case "":
	case "stdout":
		exp, err := stdouttrace.New(stdouttrace.WithWriter(out))
		if err != nil {
			return nil, nil, err
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)))
		otel.SetTracerProvider(tp)
		flush = func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = tp.Shutdown(ctx)
		}
	default:
		return nil, nil, fmt.Errorf("-trace: want stdout or nothing, got %q", o.trace)
	}
	switch {
	case o.MetricsAddr != "":
		tel, err := telemetry.Start(group, telemetry.Config{Addr: o.MetricsAddr, Queue: q.Name(), QueueURL: q.URL(), Title: "sqsloop otelworker: " + q.Name()})
		if err != nil {
			flush()
			return nil, nil, fmt.Errorf("-metrics-addr: %w", err)
		}
		fmt.Fprintf(out, "serving %s\n", tel)
		return tel.Observer(), flush, nil
	case o.trace != "":
		obs, err := otelsqsloop.New(otelsqsloop.Config{Queue: q.Name(), QueueURL: q.URL()})
		if err != nil {
			flush()
			return nil, nil, err
		}
		return obs, flush, nil
	}
	return nil, flush, nil
}
