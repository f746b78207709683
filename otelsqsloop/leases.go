package otelsqsloop

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// keyRecovery says what a sweep did with a lapsed lease.
const keyRecovery = attribute.Key("sqsloop.lease.recovery")

// QueueLeases are one queue's lease figures, as a store of leases counts
// them: for sqlmailbox, the InFlight and PastDeadline of
// Store.LeaseStats.
type QueueLeases struct {
	// Queue is the queue's name.
	Queue string
	// InFlight counts the messages a receive holds, lease deadline ahead.
	InFlight int
	// PastDeadline counts those whose lease lapsed and that neither a
	// receive nor a sweep has taken since.
	PastDeadline int
}

// LeaseMetrics exports what a store of leases (sqlmailbox's Store) knows
// of every process's leases, and no consumer sees, as OpenTelemetry
// metrics, each with messaging.destination.name (the queue):
//
//   - sqsloop.lease.expired ({lease}), a counter: leases a sweep found
//     lapsed (no ack, nack or extension before the deadline), by
//     sqsloop.lease.recovery, "visible" (made visible again: recovered)
//     or "dead_lettered" (moved to the dead-letter queue, having reached
//     maxReceiveCount). Its rate is the recovery rate. Each process counts
//     the sweeps it ran (Swept), so the sum over processes is the store's.
//   - sqsloop.lease.held and sqsloop.lease.past_deadline ({message}),
//     gauges read from the store at each collection (the read function of
//     NewLeaseMetrics): the messages a receive holds, deadline ahead, and
//     those whose lease lapsed unnoticed. Every process that reads them
//     reports the same store-wide figures: register the read function in
//     one process, or aggregate the gauge with max, not sum.
//
// It depends on no store package: the program wires its store to it (see
// the example). Safe for concurrent use.
type LeaseMetrics struct {
	expired metric.Int64Counter
	reg     metric.Registration // nil without gauges
}

// NewLeaseMetrics returns LeaseMetrics on mp (nil: the global
// MeterProvider). read, if not nil, is called at each collection of the
// metrics (on the SDK's goroutine, with its context) for the figures of
// the queues to report; an error it returns is the callback's error (the
// SDK reports it) and nothing is observed. It returns the meter's error if
// an instrument cannot be made.
func NewLeaseMetrics(mp metric.MeterProvider, read func(ctx context.Context) ([]QueueLeases, error)) (*LeaseMetrics, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName)
	expired, err := m.Int64Counter("sqsloop.lease.expired", metric.WithUnit("{lease}"),
		metric.WithDescription("Leases a sweep found lapsed, by what it did: made the message visible again, or moved it to the dead-letter queue."))
	if err != nil {
		return nil, err
	}
	lm := &LeaseMetrics{expired: expired}
	if read == nil {
		return lm, nil
	}
	held, err := m.Int64ObservableGauge("sqsloop.lease.held", metric.WithUnit("{message}"),
		metric.WithDescription("Messages a receive holds, lease deadline ahead, as the store counts them (every consumer's)."))
	if err != nil {
		return nil, err
	}
	past, err := m.Int64ObservableGauge("sqsloop.lease.past_deadline", metric.WithUnit("{message}"),
		metric.WithDescription("Messages whose lease lapsed and that neither a receive nor a sweep has taken since."))
	if err != nil {
		return nil, err
	}
	lm.reg, err = m.RegisterCallback(func(ctx context.Context, obs metric.Observer) error {
		qs, err := read(ctx)
		if err != nil {
			return err
		}
		for _, q := range qs {
			at := metric.WithAttributes(semconv.MessagingDestinationName(q.Queue))
			obs.ObserveInt64(held, int64(q.InFlight), at)
			obs.ObserveInt64(past, int64(q.PastDeadline), at)
		}
		return nil
	}, held, past)
	if err != nil {
		return nil, err
	}
	return lm, nil
}

// Swept counts what one sweep found of queue's lapsed leases: recovered
// made visible again, deadLettered moved to the dead-letter queue (for
// sqlmailbox, an entry of SweepStats.ByQueue: Recovered and Failed).
func (m *LeaseMetrics) Swept(ctx context.Context, queue string, recovered, deadLettered int) {
	for _, c := range []struct {
		n        int
		recovery string
	}{{recovered, "visible"}, {deadLettered, "dead_lettered"}} {
		if c.n > 0 {
			m.expired.Add(ctx, int64(c.n), metric.WithAttributes(semconv.MessagingDestinationName(queue), keyRecovery.String(c.recovery)))
		}
	}
}

// Close stops reading the gauges (unregisters the callback); the counter
// stays usable. It returns the SDK's error, if any.
func (m *LeaseMetrics) Close() error {
	if m.reg == nil {
		return nil
	}
	return m.reg.Unregister()
}
