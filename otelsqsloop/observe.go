package otelsqsloop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/sqsloop/sqsloop"
)

// Received makes the receive span and records the call's duration, the
// messages consumed, and a failed receive.
func (o *Observer) Received(ctx context.Context, e sqsloop.ReceiveEvent) {
	o.ahead.Store(int64(e.Ahead))
	o.held.Store(int64(e.Held))
	attrs := o.spanAttrs("receive", semconv.MessagingOperationTypeReceive, 2)
	links := make([]trace.Link, 0, len(e.Messages))
	for _, m := range e.Messages {
		links = append(links, o.links(m)...)
	}
	_, span := o.tracer.Start(ctx, "receive "+o.queue, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(e.Start), trace.WithLinks(links...),
		trace.WithAttributes(append(attrs, semconv.MessagingBatchMessageCount(len(e.Messages)))...))
	mattrs := o.metricAttrs("receive", semconv.MessagingOperationTypeReceive, e.Err)
	if e.Err != nil {
		failed(span, e.Err)
		o.inst.recvError.Add(ctx, 1, mattrs)
	}
	span.End(trace.WithTimestamp(e.Start.Add(e.Duration)))
	o.inst.opDuration.Record(ctx, e.Duration.Seconds(), mattrs)
	if n := len(e.Messages); n > 0 {
		o.inst.consumed.Add(ctx, int64(n), mattrs)
	}
}

// ProcessStart starts the process span, linked to m's creation context,
// and returns ctx carrying it.
func (o *Observer) ProcessStart(ctx context.Context, m *sqsloop.Message) context.Context {
	attrs := o.spanAttrs("process", semconv.MessagingOperationTypeProcess, 2)
	attrs = append(attrs, semconv.MessagingMessageID(m.ID), keyReceiveCount.Int(m.ReceiveCount))
	ctx, _ = o.tracer.Start(ctx, "process "+o.queue, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithLinks(o.links(m)...), trace.WithAttributes(attrs...))
	return ctx
}

// ProcessEnd ends the process span with the run's outcome, and records
// its duration (and a late result).
func (o *Observer) ProcessEnd(ctx context.Context, _ *sqsloop.Message, e sqsloop.ProcessEvent) {
	span := trace.SpanFromContext(ctx)
	outcome := keyOutcome.String(e.Outcome.String())
	span.SetAttributes(outcome)
	if e.Delay > 0 {
		span.SetAttributes(keyNackDelay.Float64(e.Delay.Seconds()))
	}
	errType := ""
	switch {
	case e.Outcome == sqsloop.OutcomePanicked:
		errType = "panic"
	case e.Err != nil:
		errType = errorType(e.Err)
	}
	switch {
	case errType != "":
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		span.SetStatus(codes.Error, e.Err.Error())
	case e.Outcome == sqsloop.OutcomeLeaseLost:
		span.SetStatus(codes.Error, "the lease was lost before the handler returned")
	case e.Outcome == sqsloop.OutcomeAbandoned:
		span.SetStatus(codes.Error, "abandoned at the end of the drain")
	}
	span.End()
	o.inst.processDuration.Record(ctx, e.Duration.Seconds(),
		o.metricAttrsType("process", semconv.MessagingOperationTypeProcess, errType, outcome))
	if e.Outcome == sqsloop.OutcomeLeaseLost {
		o.inst.lateResults.Add(ctx, 1, metric.WithAttributes(append(o.base[:len(o.base):len(o.base)], keyNeverBeat.Bool(e.NeverBeat))...))
	}
}

// Settled makes the settle span of one batch call and records its
// duration and entries.
func (o *Observer) Settled(e sqsloop.SettleEvent) {
	ctx := context.Background()
	o.held.Store(int64(e.Held))
	op := e.Op.String()
	kinds, timeout, same := o.kinds(e.Entries)
	attrs := o.spanAttrs(op, semconv.MessagingOperationTypeSettle, 4)
	attrs = append(attrs, semconv.MessagingBatchMessageCount(len(e.Entries)), keySettleKind.String(kinds))
	if e.Op == sqsloop.OpChangeVisibility && same {
		attrs = append(attrs, keyVisibility.Int64(int64(sqsloop.WholeSeconds(timeout)/time.Second)))
	}
	if len(e.Entries) == 1 {
		attrs = append(attrs, semconv.MessagingMessageID(e.Entries[0].Message.ID))
	}
	_, span := o.tracer.Start(ctx, op+" "+o.queue, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(e.Start), trace.WithAttributes(attrs...))
	var first error
	for _, en := range e.Entries {
		if en.Err != nil {
			first = en.Err
			break
		}
	}
	if first != nil {
		span.SetAttributes(keyBatchFailures.Int(e.Failed), semconv.ErrorTypeKey.String(errorType(first)))
		span.SetStatus(codes.Error, fmt.Sprintf("%d of %d entries failed: %v", e.Failed, len(e.Entries), first))
	}
	span.End(trace.WithTimestamp(e.Start.Add(e.Duration)))
	o.inst.opDuration.Record(ctx, e.Duration.Seconds(), o.metricAttrs(op, semconv.MessagingOperationTypeSettle, e.Err))
	for _, en := range e.Entries {
		kind := keySettleKind.String(en.Kind.String())
		a := o.metricAttrs(op, semconv.MessagingOperationTypeSettle, en.Err, kind)
		o.inst.settled.Add(ctx, 1, a)
		if en.Kind == sqsloop.KindExtend {
			o.inst.extensions.Add(ctx, 1, o.metricAttrsErr(en.Err))
			if en.Late {
				o.inst.lateExtensions.Add(ctx, 1, metric.WithAttributes(o.base...))
			}
		}
	}
}

// LeaseLost counts the lost lease by reason.
func (o *Observer) LeaseLost(_ *sqsloop.Message, e sqsloop.LeaseLostEvent) {
	attrs := append(o.base[:len(o.base):len(o.base)], keyLostReason.String(e.Reason.String()), keyNeverBeat.Bool(e.NeverBeat))
	o.inst.lost.Add(context.Background(), 1, metric.WithAttributes(attrs...))
}

// Drain does nothing: a drain's phases are in the consumer's log and on the
// lease page; its effects (give-backs, abandoned handlers) in the spans and
// metrics above.
func (o *Observer) Drain(sqsloop.DrainEvent) {}

// kinds names the entries' kinds, each once, comma-separated in the order
// of sqsloop.SettleKind ("extend,nack,give_back"), and reports whether
// every entry asks for the same timeout.
func (o *Observer) kinds(entries []sqsloop.SettleEntry) (string, time.Duration, bool) {
	var buf [sqsloop.MaxBatchSize]sqsloop.SettleKind
	seen := buf[:0]
	same := true
	for i, en := range entries {
		if !slices.Contains(seen, en.Kind) {
			seen = append(seen, en.Kind)
		}
		if i > 0 && en.Timeout != entries[0].Timeout {
			same = false
		}
	}
	slices.Sort(seen)
	parts := make([]string, len(seen))
	for i, k := range seen {
		parts[i] = k.String()
	}
	var timeout time.Duration
	if len(entries) > 0 {
		timeout = entries[0].Timeout
	}
	return strings.Join(parts, ","), timeout, same
}

// metricAttrs are the attributes of an operation's metric: system,
// destination, operation name and type, error.type when err is set, and
// extra.
func (o *Observer) metricAttrs(op string, opType attribute.KeyValue, err error, extra ...attribute.KeyValue) metric.MeasurementOption {
	if err != nil {
		extra = append(extra, semconv.ErrorTypeKey.String(errorType(err)))
	}
	return o.metricAttrsType(op, opType, "", extra...)
}

func (o *Observer) metricAttrsType(op string, opType attribute.KeyValue, errType string, extra ...attribute.KeyValue) metric.MeasurementOption {
	attrs := make([]attribute.KeyValue, 0, len(o.base)+3+len(extra))
	attrs = append(attrs, o.base...)
	attrs = append(attrs, semconv.MessagingOperationName(op), opType)
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	return metric.WithAttributes(append(attrs, extra...)...)
}

func (o *Observer) metricAttrsErr(err error) metric.MeasurementOption {
	if err == nil {
		return metric.WithAttributes(o.base...)
	}
	return metric.WithAttributes(append(o.base[:len(o.base):len(o.base)], semconv.ErrorTypeKey.String(errorType(err)))...)
}

// failed marks span as failed with err.
func failed(span trace.Span, err error) {
	span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
	span.SetStatus(codes.Error, err.Error())
}
