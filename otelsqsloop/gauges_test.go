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
// for 18 s once they are (three looks of 6 s); it reads the queue every
// 5 s: 98 visible and 2 in flight at 5 s, and before any handler returned
// a slot per message, (2 + 98) / 2 = 50 consumers; two minutes later
// (about 24 messages done, 74 visible, 2 in flight) it recommends (2 + 74
// × 10 s / 60 s) / 2, rounded up: 8 consumers. A failed read leaves the
// queue's gauges empty until the next one.
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

		time.Sleep(7 * time.Second) // one receive and the read of 5 s
		ms := tel.metrics(t)
		for name, want := range map[string]float64{"sqsloop.queue.backlog": 98, "sqsloop.queue.in_flight": 2, "sqsloop.queue.delayed": 0,
			"sqsloop.backlog_per_consumer": 98, "sqsloop.consumers.recommended": 50} {
			if v, ok := gauge(ms[name]); !ok || v != want {
				t.Errorf("%s = %v (%v), want %v", name, v, ok, want)
			}
		}
		if _, ok := gauge(ms["sqsloop.queue.dead_letters"]); ok {
			t.Error("sqsloop.queue.dead_letters without a dead-letter queue")
		}
		time.Sleep(4 * time.Second) // the first acks (10 s jobs on 30 s leases: no extension)
		ms = tel.metrics(t)
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

// The queue's gauges report the last read: the dead-letter queue's depth
// when it was read, nothing after a failed read (the counts are unknown,
// not zero), the counts again after the next.
func TestQueueGaugesFollowTheReads(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer(t, "jobs")
	obs.QueueRead(sqsloop.QueueEvent{Backlog: 7, InFlight: 3, DeadLetters: 4, DeadLettersRead: true, BacklogPerConsumer: 7, RecommendedConsumers: 1})
	ms := tel.metrics(t)
	if v, ok := gauge(ms["sqsloop.queue.dead_letters"]); !ok || v != 4 {
		t.Errorf("sqsloop.queue.dead_letters = %v (%v), want 4", v, ok)
	}
	obs.QueueRead(sqsloop.QueueEvent{Err: sqsloop.ErrAccessDenied})
	ms = tel.metrics(t)
	for _, name := range []string{"sqsloop.queue.backlog", "sqsloop.queue.dead_letters", "sqsloop.consumers.recommended"} {
		if v, ok := gauge(ms[name]); ok {
			t.Errorf("after a failed read, %s = %v; want no value", name, v)
		}
	}
	obs.QueueRead(sqsloop.QueueEvent{Backlog: 0, RecommendedConsumers: 1})
	ms = tel.metrics(t)
	if v, ok := gauge(ms["sqsloop.queue.backlog"]); !ok || v != 0 {
		t.Errorf("sqsloop.queue.backlog = %v (%v), want 0", v, ok)
	}
}
