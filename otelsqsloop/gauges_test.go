package otelsqsloop_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// gauge returns the value of the gauge m, and whether it has one.
func gauge(m metricdata.Metrics) (float64, bool) {
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		if len(d.DataPoints) == 1 {
			return float64(d.DataPoints[0].Value), true
		}
	case metricdata.Gauge[float64]:
		if len(d.DataPoints) == 1 {
			return d.DataPoints[0].Value, true
		}
	}
	return 0, false
}

// The lease owner's choice and the scaling signal are gauges: a consumer
// of 2 handlers that beat every second for 10 s, on a 30 s queue holding
// 100 messages with a latency target of 1 min, asks for 30 s extensions
// at first (the queue's visibility timeout, before 16 gaps are seen) and
// for 18 s once they are (three looks of 6 s); it reads 100 messages
// visible at start-up, and two minutes in (about 24 messages done, 74
// visible, 2 in flight) recommends (2 + 74 × 10 s / 60 s) / 2, rounded up:
// 8 consumers.
func TestLeaseAndScalingGauges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tel := newTelemetry(t)
		q := jobsQueue(t)
		bodies := make([]sqsloop.OutgoingMessage, 10)
		for range 10 {
			for i := range bodies {
				bodies[i] = sqsloop.OutgoingMessage{Body: "job"}
			}
			if _, err := q.Send(t.Context(), bodies); err != nil {
				t.Fatal(err)
			}
		}
		c, err := consumer.New(q, func(ctx context.Context, _ *sqsloop.Message) error {
			for range 10 {
				heartbeat.Beat(ctx)
				time.Sleep(time.Second)
			}
			return nil
		}, consumer.Config{Concurrency: 2, WaitTime: time.Second, LatencyTarget: time.Minute, Logger: quiet, Observer: tel.observer(t, "jobs")})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()

		time.Sleep(11 * time.Second) // one receive, the first acks (10 s jobs on 30 s leases: no extension)
		ms := tel.metrics(t)
		if v, ok := gauge(ms["sqsloop.queue.backlog"]); !ok || v != 100 {
			t.Errorf("sqsloop.queue.backlog = %v (%v), want the 100 read at start-up", v, ok)
		}
		if v, ok := gauge(ms["sqsloop.backlog_per_consumer"]); !ok || v != 100 {
			t.Errorf("sqsloop.backlog_per_consumer = %v (%v), want 100: nothing in flight, one consumer", v, ok)
		}
		if _, ok := gauge(ms["sqsloop.consumers.recommended"]); ok {
			t.Error("sqsloop.consumers.recommended before any handler ran")
		}
		if v, ok := gauge(ms["sqsloop.lease.extension"]); !ok || v != 33 {
			t.Errorf("sqsloop.lease.extension = %v (%v), want 33 (the queue's visibility timeout and half an Interval)", v, ok)
		}

		time.Sleep(2 * time.Minute)
		ms = tel.metrics(t)
		if v, ok := gauge(ms["sqsloop.lease.extension"]); !ok || v != 33 {
			t.Errorf("sqsloop.lease.extension = %v (%v), want 33 (beats at every look need no more than the floor)", v, ok)
		}
		if v, ok := gauge(ms["sqsloop.lease.beat_gap"]); !ok || v != 6 {
			t.Errorf("sqsloop.lease.beat_gap = %v (%v), want 6 (a look every 6 s)", v, ok)
		}
		if v, ok := gauge(ms["sqsloop.consumers.recommended"]); !ok || v < 7 || v > 9 {
			t.Errorf("sqsloop.consumers.recommended = %v (%v), want about 8", v, ok)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
