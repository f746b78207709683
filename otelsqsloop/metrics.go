package otelsqsloop

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
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
	held, e := m.Int64ObservableGauge("sqsloop.messages.in_flight", metric.WithUnit("{message}"),
		metric.WithDescription("Messages whose leases the consumer holds: running, waiting for a handler, or being settled."))
	if e != nil && err == nil {
		err = e
	}
	ahead, e := m.Int64ObservableGauge("sqsloop.receive_ahead.depth", metric.WithUnit("{message}"),
		metric.WithDescription("Messages the consumer may ask for beyond its free handler slots."))
	if e != nil && err == nil {
		err = e
	}
	if err != nil {
		return err
	}
	attrs := metric.WithAttributes(o.base...)
	_, err = m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		obs.ObserveInt64(held, o.held.Load(), attrs)
		obs.ObserveInt64(ahead, o.ahead.Load(), attrs)
		return nil
	}, held, ahead)
	return err
}
