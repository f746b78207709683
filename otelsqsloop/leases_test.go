package otelsqsloop_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sqsloop/sqsloop/otelsqsloop"
)

// LeaseMetrics counts what sweeps recovered, by queue and what they did,
// and reads the gauges from the store at each collection; a failed read
// observes nothing; Close stops the reads.
func TestLeaseMetrics(t *testing.T) {
	tel := newTelemetry(t)
	reads := 0
	var failing error
	lm, err := otelsqsloop.NewLeaseMetrics(tel.mp, func(context.Context) ([]otelsqsloop.QueueLeases, error) {
		reads++
		return []otelsqsloop.QueueLeases{{Queue: "jobs", InFlight: 7, PastDeadline: 2}, {Queue: "mail", InFlight: 1}}, failing
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	lm.Swept(ctx, "jobs", 3, 1)
	lm.Swept(ctx, "jobs", 2, 0)
	lm.Swept(ctx, "mail", 0, 0)
	ms := tel.metrics(t)
	jobs := attribute.String("messaging.destination.name", "jobs")
	mail := attribute.String("messaging.destination.name", "mail")
	expired := ms["sqsloop.lease.expired"]
	for _, c := range []struct {
		with []attribute.KeyValue
		want int64
	}{
		{[]attribute.KeyValue{jobs, attribute.String("sqsloop.lease.recovery", "visible")}, 5},
		{[]attribute.KeyValue{jobs, attribute.String("sqsloop.lease.recovery", "dead_lettered")}, 1},
		{[]attribute.KeyValue{mail}, 0},
	} {
		if got := total(t, expired, c.with...); got != c.want {
			t.Errorf("sqsloop.lease.expired %v = %d, want %d", c.with, got, c.want)
		}
	}
	if got := total(t, ms["sqsloop.lease.held"], jobs); got != 7 {
		t.Errorf("sqsloop.lease.held of jobs = %d, want 7", got)
	}
	if got := total(t, ms["sqsloop.lease.past_deadline"], jobs); got != 2 {
		t.Errorf("sqsloop.lease.past_deadline of jobs = %d, want 2", got)
	}
	if got := total(t, ms["sqsloop.lease.held"], mail); got != 1 {
		t.Errorf("sqsloop.lease.held of mail = %d, want 1", got)
	}
	if reads != 1 {
		t.Errorf("%d reads in one collection, want 1", reads)
	}

	failing = errors.New("the database is down")
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(ctx, &rm); !errors.Is(err, failing) {
		t.Errorf("collecting while the read fails: %v, want the read's error", err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "sqsloop.lease.held" {
				t.Errorf("a failed read observed sqsloop.lease.held %+v", m)
			}
		}
	}
	failing = nil
	if err := lm.Close(); err != nil {
		t.Fatal(err)
	}
	before := reads
	tel.metrics(t)
	if reads != before {
		t.Errorf("the store was read after Close")
	}
}
