package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
)

// window is the claim percentiles' rolling window (the contract's 30 s).
const window = 30 * time.Second

// telemetry holds what the sampler reports: counts, the latest queue
// depth, the producer's target rate, and the pickup latencies of the last
// window in an HDR histogram of microseconds (1 µs to 1 h, 3 significant
// figures), one part per sample period, the oldest dropped as a new one
// starts: bounded memory however long the run.
type telemetry struct {
	s                   settings
	enqueued, completed atomic.Int64
	depth, inFlight     atomic.Int64
	targetRate          atomic.Int64
	sendFailures        atomic.Int64
	// enqueuedAtDepth is enqueued as it was just before depth was read;
	// sending counts the jobs of depth-target batches not yet sent.
	enqueuedAtDepth, sending atomic.Int64

	mu  sync.Mutex
	lat *hdrhistogram.WindowedHistogram
}

func newTelemetry(s settings) *telemetry {
	parts := int((window + time.Duration(s.sampleEvery)*time.Second - 1) / (time.Duration(s.sampleEvery) * time.Second))
	t := &telemetry{s: s, lat: hdrhistogram.NewWindowed(parts, 1, int64(time.Hour/time.Microsecond), 3)}
	t.targetRate.Store(int64(s.rate))
	return t
}

// handler records the pickup latency (now minus the message's SentAt,
// the database's time at the insert), works workMS and counts the job.
func (t *telemetry) handler(workMS int) sqsloop.Handler {
	work := time.Duration(workMS) * time.Millisecond
	return func(ctx context.Context, m *sqsloop.Message) error {
		us := max(time.Since(m.SentAt).Microseconds(), 1)
		t.mu.Lock()
		_ = t.lat.Current.RecordValue(us) // past an hour: dropped
		t.mu.Unlock()
		if work > 0 {
			select {
			case <-time.After(work):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		t.completed.Add(1)
		return nil
	}
}

// pollDepth reads the queue's counts every 200 ms (the cadence of River's
// and pgmq's adapters) while ctx lasts, when this replica reports them or
// its producer needs them.
func (t *telemetry) pollDepth(ctx context.Context, mb sqsloop.AttributesReader, on bool) {
	if !on {
		return
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		enq := t.enqueued.Load()
		if a, err := mb.QueueAttributes(ctx); err == nil {
			t.enqueuedAtDepth.Store(enq)
			t.depth.Store(int64(a.ApproximateMessages))
			t.inFlight.Store(int64(a.ApproximateMessagesInFlight))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// observerMetrics describe the whole queue, not this replica: only
// replica 0 reports them (as the other adapters do).
var observerMetrics = map[string]bool{"queue_depth": true, "running_depth": true, "producer_target_rate": true}

// sample emits the metrics every SAMPLE_EVERY_S seconds, the first at the
// next multiple of it on the wall clock, until ctx ends.
func (t *telemetry) sample(ctx context.Context) {
	every := time.Duration(t.s.sampleEvery) * time.Second
	first := time.Until(time.Now().Truncate(every).Add(every))
	select {
	case <-ctx.Done():
		return
	case <-time.After(first):
	}
	lastEnq, lastCmp, last := t.enqueued.Load(), t.completed.Load(), time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		dt := max(now.Sub(last).Seconds(), 0.001)
		enq, cmp := t.enqueued.Load(), t.completed.Load()
		t.mu.Lock()
		h := t.lat.Merge()
		t.lat.Rotate()
		t.mu.Unlock()
		ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1000 }
		ts := isoNow()
		for _, m := range []struct {
			name    string
			value   float64
			windowS float64
		}{
			{"claim_p50_ms", ms(50), window.Seconds()},
			{"claim_p95_ms", ms(95), window.Seconds()},
			{"claim_p99_ms", ms(99), window.Seconds()},
			{"enqueue_rate", float64(enq-lastEnq) / dt, float64(t.s.sampleEvery)},
			{"completion_rate", float64(cmp-lastCmp) / dt, float64(t.s.sampleEvery)},
			{"queue_depth", float64(t.depth.Load()), 0},
			{"running_depth", float64(t.inFlight.Load()), 0},
			{"producer_target_rate", float64(t.targetRate.Load()), 0},
		} {
			if observerMetrics[m.name] && t.s.instance != 0 {
				continue
			}
			emit(map[string]any{"t": ts, "system": system, "kind": "adapter", "subject_kind": "adapter", "subject": "",
				"metric": m.name, "value": m.value, "window_s": m.windowS, "instance_id": t.s.instance})
		}
		lastEnq, lastCmp, last = enq, cmp, now
	}
}

// final writes to standard error this replica's totals and the queue's
// counts as the database has them now (after the drain): what explains a
// jobs_lost estimate (still visible, still in flight, dead-lettered,
// received more than once).
func (t *telemetry) final(ctx context.Context, mb interface {
	sqsloop.AttributesReader
	sqsloop.DeadLetterQueueOpener
}, st consumer.Stats) {
	rec := map[string]any{"kind": "final", "system": system, "instance_id": t.s.instance,
		"enqueued": t.enqueued.Load(), "send_failures": t.sendFailures.Load(), "completed": t.completed.Load(),
		"received": st.Received, "redelivered": st.Redelivered, "started": st.Started, "succeeded": st.Succeeded,
		"failed": st.Failed, "acked": st.Acked, "ack_failed": st.AckFailed, "given_back": st.GivenBack, "leases_lost": st.LeasesLost}
	if a, err := mb.QueueAttributes(ctx); err == nil {
		rec["visible"], rec["in_flight"], rec["delayed"] = a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed
	}
	if dlq, err := mb.OpenDeadLetterQueue(ctx); err == nil {
		if r, ok := dlq.(sqsloop.AttributesReader); ok {
			if a, err := r.QueueAttributes(ctx); err == nil {
				rec["dead_letters"] = a.ApproximateMessages + a.ApproximateMessagesInFlight
			}
		}
		_ = dlq.Close()
	}
	b, _ := json.Marshal(rec)
	fmt.Fprintln(os.Stderr, string(b))
}
