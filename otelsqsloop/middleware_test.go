package otelsqsloop_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/otelsqsloop"
)

// sum returns the value of the counter m, and whether it has one.
func sum(m metricdata.Metrics) (int64, bool) {
	if d, ok := m.Data.(metricdata.Sum[int64]); ok && len(d.DataPoints) == 1 {
		return d.DataPoints[0].Value, true
	}
	return 0, false
}

// Given the middlewares, the Observer reports their Stats as counters: a
// message delivered twice through idempotency and checkpoints runs once
// (one duplicate), saves two checkpoints; a job delivered again after its
// lost ack is answered from its done mark; no middleware, no counters.
func TestMiddlewareCounters(t *testing.T) {
	tel := newTelemetry(t)
	store := &jobstate.Memory{}
	idem, err := idempotency.New(store, idempotency.Config{Queue: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	cps, err := checkpoint.New(store, checkpoint.Config{Queue: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := otelsqsloop.New(otelsqsloop.Config{Queue: "jobs", MeterProvider: tel.mp, Idempotency: idem, Checkpoints: cps}); err != nil {
		t.Fatal(err)
	}
	h := idem.Middleware(cps.Middleware(func(ctx context.Context, _ *sqsloop.Message) error {
		for step := range 2 {
			if err := checkpoint.SaveJSON(ctx, step); err != nil {
				return err
			}
		}
		return nil
	}))
	m := &sqsloop.Message{ID: "m1", Body: "job", ReceiveCount: 1}
	for range 2 {
		if err := h(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	// A job whose ack was lost, delivered again to the checkpoints alone:
	// answered from its done mark, not run.
	ran := 0
	cp := cps.Middleware(func(ctx context.Context, _ *sqsloop.Message) error {
		ran++
		return checkpoint.SaveJSON(ctx, 1)
	})
	for count := 1; count <= 2; count++ {
		if err := cp(t.Context(), &sqsloop.Message{ID: "m2", Body: "job", ReceiveCount: count}); err != nil {
			t.Fatal(err)
		}
	}
	if ran != 1 {
		t.Errorf("the job ran %d times, want once", ran)
	}
	ms := tel.metrics(t)
	for name, want := range map[string]int64{"sqsloop.idempotency.runs": 1, "sqsloop.idempotency.duplicates": 1, "sqsloop.idempotency.busy": 0,
		"sqsloop.idempotency.lost_claims": 0, "sqsloop.idempotency.store_errors": 0,
		"sqsloop.checkpoint.saved": 3, "sqsloop.checkpoint.resumed": 0, "sqsloop.checkpoint.finished": 1, "sqsloop.checkpoint.mark_errors": 0} {
		if v, ok := sum(ms[name]); !ok || v != want {
			t.Errorf("%s = %d (%v), want %d", name, v, ok, want)
		}
	}

	bare := newTelemetry(t)
	bare.observer(t, "jobs")
	for name := range bare.metrics(t) {
		if name == "sqsloop.idempotency.runs" || name == "sqsloop.checkpoint.saved" {
			t.Errorf("%s without the middleware", name)
		}
	}
}
