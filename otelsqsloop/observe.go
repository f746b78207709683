package otelsqsloop

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// Received makes the receive span and records the call's duration, the
// messages consumed, and a failed receive.
func (o *Observer) Received(ctx context.Context, e sqsloop.ReceiveEvent) {
	o.ahead.Store(int64(e.Ahead))
	o.held.Store(int64(e.Held))
	_, span := o.tracer.Start(ctx, o.receive.name, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(e.Start),
		trace.WithAttributes(append(o.receive.spanAttrs(1), semconv.MessagingBatchMessageCount(len(e.Messages)))...))
	if span.IsRecording() {
		// Read the messages' creation contexts only for a span that keeps
		// them (ProcessStart reads each again for its own span).
		var buf [2 * sqsloop.MaxBatchSize]trace.Link
		links := buf[:0]
		for _, m := range e.Messages {
			links = o.appendLinks(links, m)
		}
		for _, l := range links {
			span.AddLink(l)
		}
	}
	opt := o.receive.ok
	if e.Err != nil {
		errType := errorType(e.Err)
		failed(span, errType, e.Err.Error())
		opt = measure(o.receive.attrs, errType)
		o.inst.recvError.Add(ctx, 1, opt)
	}
	span.End(trace.WithTimestamp(e.Start.Add(e.Duration)))
	o.inst.opDuration.Record(ctx, e.Duration.Seconds(), opt)
	if n := len(e.Messages); n > 0 {
		o.inst.consumed.Add(ctx, int64(n), opt)
	}
}

// ProcessStart starts the process span, linked to m's creation context,
// and returns ctx carrying it.
func (o *Observer) ProcessStart(ctx context.Context, m *sqsloop.Message) context.Context {
	attrs := append(o.process.spanAttrs(2), semconv.MessagingMessageID(m.ID), keyReceiveCount.Int(m.ReceiveCount))
	ctx, _ = o.tracer.Start(ctx, o.process.name, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithLinks(o.appendLinks(nil, m)...), trace.WithAttributes(attrs...))
	return ctx
}

// ProcessEnd ends the process span with the run's outcome, and records
// its duration (and a late result).
func (o *Observer) ProcessEnd(ctx context.Context, _ *sqsloop.Message, e sqsloop.ProcessEvent) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(keyOutcome.String(e.Outcome))
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
		failed(span, errType, e.Err.Error())
	case e.Outcome == sqsloop.OutcomeLeaseLost:
		span.SetStatus(codes.Error, "the lease was lost before the handler returned")
	case e.Outcome == sqsloop.OutcomeAbandoned:
		span.SetStatus(codes.Error, "abandoned at the end of the drain")
	}
	span.End()
	o.inst.processDuration.Record(ctx, e.Duration.Seconds(), o.outcomeOpt(e.Outcome, errType))
	if e.Outcome == sqsloop.OutcomeLeaseLost {
		o.inst.lateResults.Add(ctx, 1, o.opts.lateResult[e.NeverBeat])
	}
}

// Settled makes the settle span of one batch call and records its
// duration and entries: one measurement per kind and error.type.
func (o *Observer) Settled(e sqsloop.SettleEvent) {
	ctx := context.Background()
	o.held.Store(int64(e.Held))
	if l := o.lease.Load(); e.Extension > 0 && (l == nil || l.extension != e.Extension || l.beatGap != e.BeatGap) {
		o.lease.Store(&leaseSample{extension: e.Extension, beatGap: e.BeatGap})
	}
	op := o.settleOp(e.Op)
	var buf [sqsloop.MaxBatchSize]entryGroup
	groups, late := group(buf[:0], e)
	attrs := append(op.spanAttrs(4), semconv.MessagingBatchMessageCount(len(e.Entries)), keySettleKind.String(kinds(groups)))
	if timeout, same := sameTimeout(e.Entries); e.Op == sqsloop.OpChangeVisibility && same {
		attrs = append(attrs, keyVisibility.Int64(int64(sqsloop.WholeSeconds(timeout)/time.Second)))
	}
	if len(e.Entries) == 1 {
		attrs = append(attrs, semconv.MessagingMessageID(e.Entries[0].Message.ID))
	}
	_, span := o.tracer.Start(ctx, op.name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(e.Start), trace.WithAttributes(attrs...))
	for _, en := range e.Entries {
		if en.Err != nil { // the first failure
			span.SetAttributes(keyBatchFailures.Int(e.Failed))
			failed(span, errorType(en.Err), fmt.Sprintf("%d of %d entries failed: %v", e.Failed, len(e.Entries), en.Err))
			break
		}
	}
	span.End(trace.WithTimestamp(e.Start.Add(e.Duration)))
	opt := op.ok
	if e.Err != nil {
		opt = measure(op.attrs, errorType(e.Err))
	}
	o.inst.opDuration.Record(ctx, e.Duration.Seconds(), opt)
	for _, g := range groups {
		o.inst.settled.Add(ctx, g.n, o.entryOpt(e.Op, g.kind, g.errType))
		if g.kind == sqsloop.KindExtend {
			opt := o.opts.plain
			if g.errType != "" {
				opt = measure(o.base, g.errType)
			}
			o.inst.extensions.Add(ctx, g.n, opt)
		}
	}
	if late > 0 {
		o.inst.lateExtensions.Add(ctx, late, o.opts.plain)
	}
}

// entryGroup counts the entries of one kind and error.type ("": none) in a
// batch call.
type entryGroup struct {
	kind    string // sqsloop.SettleEntry.Kind
	errType string
	n       int64
}

// group appends to groups the entries of e by kind and error.type, in
// that order, and counts the late extensions.
func group(groups []entryGroup, e sqsloop.SettleEvent) ([]entryGroup, int64) {
	var late int64
	callType := ""
	if e.Err != nil { // every entry failed with it
		callType = errorType(e.Err)
	}
	for _, en := range e.Entries {
		if en.Late {
			late++
		}
		errType := ""
		if en.Err != nil {
			errType = cmp.Or(callType, errorType(en.Err))
		}
		i := slices.IndexFunc(groups, func(g entryGroup) bool { return g.kind == en.Kind && g.errType == errType })
		if i < 0 {
			groups = append(groups, entryGroup{kind: en.Kind, errType: errType})
			i = len(groups) - 1
		}
		groups[i].n++
	}
	slices.SortFunc(groups, func(a, b entryGroup) int {
		return cmp.Or(cmp.Compare(kindOrder(a.kind), kindOrder(b.kind)), strings.Compare(a.kind, b.kind), strings.Compare(a.errType, b.errType))
	})
	return groups, late
}

// kindOrder is kind's place in rules.SettleKinds; a kind not there (one
// added to sqsloop later) comes after them.
func kindOrder(kind string) int {
	if i := slices.Index(rules.SettleKinds, kind); i >= 0 {
		return i
	}
	return len(rules.SettleKinds)
}

// kinds names the kinds of groups (sorted by kind), each once,
// comma-separated in the order of kindOrder ("extend,nack,give_back").
func kinds(groups []entryGroup) string {
	var names []string
	for i, g := range groups {
		if i == 0 || g.kind != groups[i-1].kind {
			names = append(names, g.kind)
		}
	}
	return strings.Join(names, ",")
}

// sameTimeout returns the timeout of the first entry and reports whether
// every entry asks for it.
func sameTimeout(entries []sqsloop.SettleEntry) (time.Duration, bool) {
	if len(entries) == 0 {
		return 0, false
	}
	for _, en := range entries[1:] {
		if en.Timeout != entries[0].Timeout {
			return entries[0].Timeout, false
		}
	}
	return entries[0].Timeout, true
}

// LeaseLost counts the lost lease by reason.
func (o *Observer) LeaseLost(_ *sqsloop.Message, e sqsloop.LeaseLostEvent) {
	o.inst.lost.Add(context.Background(), 1, measure(o.base, "", keyLostReason.String(e.Reason), keyNeverBeat.Bool(e.NeverBeat)))
}

// QueueRead keeps the queue's counts and the scaling signal for the
// gauges, which report them until the next read; after a failed read they
// report nothing (the counts are unknown) until a read succeeds.
func (o *Observer) QueueRead(e sqsloop.QueueEvent) {
	o.queueRead.Store(&e)
}

// Drain does nothing: a drain's phases are in the consumer's log and on the
// lease page; its effects (give-backs, abandoned handlers) in the spans and
// metrics above.
func (o *Observer) Drain(sqsloop.DrainEvent) {}

// failed marks span as failed with error.type errType and status message
// msg.
func failed(span trace.Span, errType, msg string) {
	span.SetAttributes(semconv.ErrorTypeKey.String(errType))
	span.SetStatus(codes.Error, msg)
}
