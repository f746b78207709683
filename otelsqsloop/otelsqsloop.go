package otelsqsloop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/idempotency"
)

// ScopeName is the instrumentation scope of the tracer and the meter:
// this package's import path.
const ScopeName = "github.com/sqsloop/sqsloop/otelsqsloop"

// Config says which queue an Observer reports on and where its spans and
// metrics go. At least one of Queue and QueueURL is required.
type Config struct {
	// QueueURL is the queue's URL, reported as aws.sqs.queue.url; its last
	// path segment names the queue when Queue is empty.
	QueueURL string
	// Queue is the queue's name, messaging.destination.name and the second
	// word of every span name. Default: the last path segment of QueueURL.
	Queue string
	// TracerProvider makes the spans. Default otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics. Default otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator reads (and InjectMessage writes) the creation context in
	// message attributes. Default W3C Trace Context (traceparent,
	// tracestate), whatever the global propagator is, so that a consumer
	// and a producer agree without more setup.
	Propagator propagation.TextMapPropagator
	// Idempotency and Checkpoints, when set, are the consumer's
	// middlewares, whose counts (their Stats) the Observer reports as
	// counters (see the package doc).
	Idempotency *idempotency.Idempotency
	Checkpoints *checkpoint.Checkpoints
}

// Observer is a sqsloop.Observer that makes spans and metrics (see the
// package doc). Give it to consumer.Config.Observer (or
// visibility.Config.Observer). Safe for concurrent use.
type Observer struct {
	queue, url string
	tracer     trace.Tracer
	prop       propagation.TextMapPropagator
	fields     []string             // the message attributes prop reads
	base       []attribute.KeyValue // system and destination
	inst       instruments

	// Made once in New, read only after.
	receive, process *operation
	settle           map[string]*operation // by sqsloop.SettleEvent.Op
	opts             measurements

	held, ahead atomic.Int64 // the gauges' last samples
	lease       atomic.Pointer[leaseSample]
	queueRead   atomic.Pointer[sqsloop.QueueEvent] // the last read of the queue's counts
}

var _ sqsloop.Observer = (*Observer)(nil)

// New returns an Observer for cfg. It returns an error wrapping
// sqsloop.ErrInvalidArgument when neither Queue nor QueueURL is set (or
// QueueURL is not a URL), and the meter's error if an instrument cannot be
// made.
func New(cfg Config) (*Observer, error) {
	name := cfg.Queue
	if name == "" && cfg.QueueURL != "" {
		u, err := url.Parse(cfg.QueueURL)
		if err != nil {
			return nil, fmt.Errorf("otelsqsloop: QueueURL: %v: %w", err, sqsloop.ErrInvalidArgument)
		}
		name = path.Base(u.Path)
	}
	if name == "" || name == "/" || name == "." {
		return nil, fmt.Errorf("otelsqsloop: Queue: set Queue or QueueURL (naming the queue): %w", sqsloop.ErrInvalidArgument)
	}
	tp, mp, prop := cfg.TracerProvider, cfg.MeterProvider, cfg.Propagator
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	o := &Observer{
		queue:  name,
		url:    cfg.QueueURL,
		tracer: tp.Tracer(ScopeName),
		prop:   prop,
		fields: prop.Fields(),
		base:   []attribute.KeyValue{semconv.MessagingSystemAWSSQS, semconv.MessagingDestinationName(name)},
	}
	o.measurements()
	meter := mp.Meter(ScopeName)
	if err := o.inst.init(meter, o); err != nil {
		return nil, err
	}
	if err := o.observeMiddlewares(meter, cfg.Idempotency, cfg.Checkpoints); err != nil {
		return nil, err
	}
	return o, nil
}

// errorType is error.type for err, one of a bounded set (the package doc
// lists it): the class the error names itself (ErrorType(), as a lost
// lease's "lease_lost" and sqsloop.Permanent's "permanent"), the error
// code it carries (an SQS error code), the sentinel it wraps, "timeout",
// "canceled", else "_OTHER". Never the Go type: *errors.errorString or
// *fmt.wrapError say nothing of the failure, and a program's own types
// would make the set as large as the program.
func errorType(err error) string {
	var typed interface{ ErrorType() string }
	if errors.As(err, &typed) && typed.ErrorType() != "" {
		return typed.ErrorType()
	}
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) && coded.ErrorCode() != "" {
		return coded.ErrorCode()
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return semconv.ErrorTypeOther.Value.AsString()
}

var sentinels = []struct {
	err  error
	name string
}{
	{sqsloop.ErrReceiptHandleExpired, "receipt_handle_expired"},
	{sqsloop.ErrAccessDenied, "access_denied"},
	{sqsloop.ErrQueueNotFound, "queue_not_found"},
	{sqsloop.ErrLeaseCeiling, "lease_ceiling"},
	{sqsloop.ErrMailboxClosed, "mailbox_closed"},
	{sqsloop.ErrInvalidArgument, "invalid_argument"},
	{context.DeadlineExceeded, "timeout"},
	{context.Canceled, "canceled"},
}
