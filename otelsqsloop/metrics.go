package otelsqsloop

import (
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// durationBuckets are the bucket boundaries, in seconds, the messaging
// conventions advise for their duration histograms.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// Attribute keys of our own (see the package doc).
const (
	keyOutcome       = attribute.Key("sqsloop.outcome")
	keyReceiveCount  = attribute.Key("sqsloop.receive_count")
	keyNackDelay     = attribute.Key("sqsloop.nack_delay")
	keyLostReason    = attribute.Key("sqsloop.lease.lost_reason")
	keyNeverBeat     = attribute.Key("sqsloop.never_beat")
	keySettleKind    = attribute.Key("aws.sqs.settle.kind")
	keyVisibility    = attribute.Key("aws.sqs.visibility_timeout")
	keyBatchFailures = attribute.Key("aws.sqs.batch.failed_count")
)

// instruments are an Observer's metrics.
type instruments struct {
	opDuration, processDuration           metric.Float64Histogram
	consumed, extensions, lateExtensions  metric.Int64Counter
	lost, lateResults, settled, recvError metric.Int64Counter
}

func (in *instruments) init(m metric.Meter, o *Observer) error {
	var err error
	hist := func(name, desc string) metric.Float64Histogram {
		h, e := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		if e != nil && err == nil {
			err = e
		}
		return h
	}
	count := func(name, unit, desc string) metric.Int64Counter {
		c, e := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if e != nil && err == nil {
			err = e
		}
		return c
	}
	in.opDuration = hist("messaging.client.operation.duration", "Duration of messaging operation initiated by a producer or consumer client.")
	in.processDuration = hist("messaging.process.duration", "Duration of processing operation.")
	in.consumed = count("messaging.client.consumed.messages", "{message}", "Number of messages that were delivered to the application.")
	in.extensions = count("sqsloop.lease.extensions", "{extension}", "Lease extensions sent (ChangeMessageVisibilityBatch entries), failed ones with error.type.")
	in.lateExtensions = count("sqsloop.lease.late_extensions", "{extension}", "Lease extensions sent with less than a quarter of the lease owner's interval left before the deadline.")
	in.lost = count("sqsloop.lease.lost", "{lease}", "Leases lost, by reason: the message may be delivered again.")
	in.lateResults = count("sqsloop.process.late_results", "{message}", "Handlers that returned after their lease was lost.")
	in.settled = count("sqsloop.settled.messages", "{message}", "Entries of delete and visibility-change calls, by kind.")
	in.recvError = count("sqsloop.receive.errors", "{call}", "Receive calls that failed.")
	intGauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, e := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if e != nil && err == nil {
			err = e
		}
		return g
	}
	floatGauge := func(name, unit, desc string) metric.Float64ObservableGauge {
		g, e := m.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if e != nil && err == nil {
			err = e
		}
		return g
	}
	held := intGauge("sqsloop.messages.in_flight", "{message}", "Messages whose leases the consumer holds: running, waiting for a handler, or being settled.")
	ahead := intGauge("sqsloop.receive_ahead.depth", "{message}", "Messages the consumer may ask for beyond its free handler slots.")
	extension := floatGauge("sqsloop.lease.extension", "s", "The visibility timeout the lease owner asks for when it extends a lease: its adaptive choice, or the fixed extension.")
	beatGap := floatGauge("sqsloop.lease.beat_gap", "s", "The 99th percentile of the gaps between beats the lease owner observed, which its adaptive extension follows.")
	backlog := intGauge("sqsloop.queue.backlog", "{message}", "The queue's visible messages (ApproximateNumberOfMessages), as the consumer last read them.")
	queueInFlight := intGauge("sqsloop.queue.in_flight", "{message}", "The queue's messages in flight, received by any consumer and not yet deleted nor visible again (ApproximateNumberOfMessagesNotVisible), as the consumer last read them.")
	delayed := intGauge("sqsloop.queue.delayed", "{message}", "The queue's messages whose delivery delay has not ended (ApproximateNumberOfMessagesDelayed), as the consumer last read them.")
	deadLetters := intGauge("sqsloop.queue.dead_letters", "{message}", "The visible messages of the queue's dead-letter queue, as the consumer last read them.")
	perConsumer := floatGauge("sqsloop.backlog_per_consumer", "{message}", "The queue's visible messages shared among its consumers, as many as its messages in flight make.")
	recommended := intGauge("sqsloop.consumers.recommended", "{consumer}", "The consumers the queue needs: for the consumer's latency target, else a handler slot per message visible or in flight.")
	if err != nil {
		return err
	}
	_, err = m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		opt := o.opts.plain
		obs.ObserveInt64(held, o.held.Load(), opt)
		obs.ObserveInt64(ahead, o.ahead.Load(), opt)
		if l := o.lease.Load(); l != nil {
			obs.ObserveFloat64(extension, l.extension.Seconds(), opt)
			if l.beatGap > 0 {
				obs.ObserveFloat64(beatGap, l.beatGap.Seconds(), opt)
			}
		}
		if q := o.queueRead.Load(); q != nil && q.Err == nil {
			obs.ObserveInt64(backlog, int64(q.Backlog), opt)
			obs.ObserveInt64(queueInFlight, int64(q.InFlight), opt)
			obs.ObserveInt64(delayed, int64(q.Delayed), opt)
			if q.DeadLettersRead {
				obs.ObserveInt64(deadLetters, int64(q.DeadLetters), opt)
			}
			obs.ObserveFloat64(perConsumer, q.BacklogPerConsumer, opt)
			obs.ObserveInt64(recommended, int64(q.RecommendedConsumers), opt)
		}
		return nil
	}, held, ahead, extension, beatGap, backlog, queueInFlight, delayed, deadLetters, perConsumer, recommended)
	return err
}

// leaseSample is the lease owner's choice of extension, as the latest
// batch call reported it.
type leaseSample struct{ extension, beatGap time.Duration }

// operation is one kind of call or handler run an Observer reports: its
// span's name and attributes, and its measurements' attributes.
type operation struct {
	name  string                   // the span's, "{operation} {queue}"
	span  []attribute.KeyValue     // every span's: system, destination, operation name and type, queue URL
	attrs []attribute.KeyValue     // every measurement's: system, destination, operation name and type
	ok    metric.MeasurementOption // attrs, for a call without error
}

func (o *Observer) operation(name string, opType attribute.KeyValue) *operation {
	attrs := append(slices.Clip(o.base), semconv.MessagingOperationName(name), opType)
	span := slices.Clip(attrs)
	if o.url != "" {
		span = append(span, semconv.AWSSQSQueueURL(o.url))
	}
	return &operation{name: name + " " + o.queue, span: slices.Clip(span), attrs: slices.Clip(attrs), ok: measure(attrs, "")}
}

// settleOp is the operation of the batch call op.
func (o *Observer) settleOp(op string) *operation {
	if so, ok := o.settle[op]; ok {
		return so
	}
	return o.operation(op, semconv.MessagingOperationTypeSettle)
}

// spanAttrs returns op's span attributes, with room for extra more.
func (op *operation) spanAttrs(extra int) []attribute.KeyValue {
	return append(make([]attribute.KeyValue, 0, len(op.span)+extra), op.span...)
}

// measurements are the measurement options of what happens without error,
// made once: an attribute set made at every measurement cost a third of
// the Observer's time.
type measurements struct {
	plain      metric.MeasurementOption              // system and destination: extensions, late extensions, the gauges
	outcome    map[string]metric.MeasurementOption   // handler runs, by outcome
	entry      map[entryKey]metric.MeasurementOption // settled entries, by call and kind
	lateResult map[bool]metric.MeasurementOption     // late results, by never_beat
}

type entryKey struct{ op, kind string }

// measurements makes o's operations and measurement options.
func (o *Observer) measurements() {
	o.receive = o.operation("receive", semconv.MessagingOperationTypeReceive)
	o.process = o.operation("process", semconv.MessagingOperationTypeProcess)
	o.settle = map[string]*operation{}
	o.opts = measurements{plain: measure(o.base, ""), outcome: map[string]metric.MeasurementOption{},
		entry: map[entryKey]metric.MeasurementOption{}, lateResult: map[bool]metric.MeasurementOption{}}
	for _, out := range rules.Outcomes {
		o.opts.outcome[out] = measure(o.process.attrs, "", keyOutcome.String(out))
	}
	for _, op := range []string{sqsloop.OpDelete, sqsloop.OpChangeVisibility} {
		o.settle[op] = o.operation(op, semconv.MessagingOperationTypeSettle)
		for _, kind := range rules.SettleKinds {
			o.opts.entry[entryKey{op, kind}] = measure(o.settle[op].attrs, "", keySettleKind.String(kind))
		}
	}
	for _, never := range []bool{false, true} {
		o.opts.lateResult[never] = measure(o.base, "", keyNeverBeat.Bool(never))
	}
}

// outcomeOpt is the measurement option of a handler run.
func (o *Observer) outcomeOpt(out, errType string) metric.MeasurementOption {
	if opt, ok := o.opts.outcome[out]; ok && errType == "" {
		return opt
	}
	return measure(o.process.attrs, errType, keyOutcome.String(out))
}

// entryOpt is the measurement option of settled entries of kind in a call
// of op.
func (o *Observer) entryOpt(op, kind, errType string) metric.MeasurementOption {
	if opt, ok := o.opts.entry[entryKey{op, kind}]; ok && errType == "" {
		return opt
	}
	return measure(o.settleOp(op).attrs, errType, keySettleKind.String(kind))
}

// measure is the measurement option of attrs and extra, with error.type
// errType unless it is "".
func measure(attrs []attribute.KeyValue, errType string, extra ...attribute.KeyValue) metric.MeasurementOption {
	kv := make([]attribute.KeyValue, 0, len(attrs)+len(extra)+1)
	kv = append(append(kv, attrs...), extra...)
	if errType != "" {
		kv = append(kv, semconv.ErrorTypeKey.String(errType))
	}
	return metric.WithAttributeSet(attribute.NewSet(kv...))
}
