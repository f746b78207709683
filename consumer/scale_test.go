package consumer

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestScaleOf(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name              string
		backlog, inFlight int
		held, slots       int
		took, target      time.Duration
		perConsumer       float64
		recommended       int
	}{
		// 20 in flight, 10 of them here: 2 consumers; they must keep 20
		// running (2 consumers) and clear 100 × 2 s / 10 s = 20 more
		// slots' worth: 4 consumers of 10.
		{"busy", 100, 20, 10, 10, 2 * time.Second, 10 * time.Second, 50, 4},
		{"holding nothing: a consumer holds its slots", 100, 20, 0, 5, 2 * time.Second, 10 * time.Second, 25, 8},
		{"no target", 100, 20, 10, 10, 2 * time.Second, 0, 50, 0},
		{"no handler ran yet", 100, 20, 10, 10, 0, 10 * time.Second, 50, 0},
		{"idle", 0, 0, 0, 10, 2 * time.Second, 10 * time.Second, 0, 1},
		{"keeping up", 0, 35, 10, 10, 2 * time.Second, 10 * time.Second, 0, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scaleOf(sqsloop.QueueAttributes{ApproximateMessages: tc.backlog, ApproximateMessagesInFlight: tc.inFlight},
				tc.held, tc.slots, tc.took, tc.target, now)
			if s.backlog != tc.backlog || s.perConsumer != tc.perConsumer || s.recommended != tc.recommended || !s.at.Equal(now) {
				t.Errorf("got %+v, want backlog %d, %v per consumer, %d recommended", s, tc.backlog, tc.perConsumer, tc.recommended)
			}
		})
	}
}

// receives keeps the last ReceiveEvent.
type receives struct {
	sqsloop.NopObserver
	mu   sync.Mutex
	last sqsloop.ReceiveEvent
}

func (r *receives) Received(_ context.Context, e sqsloop.ReceiveEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = e
}

func (r *receives) get() sqsloop.ReceiveEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// A consumer with an Observer reads its queue's counts at start-up and
// every 30 s, and its receive events carry the scaling signal: 2 handlers
// of 1 s against 1,000 messages and a 10 s latency target need about 45
// consumers.
func TestReceiveEventsCarryTheScalingSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(1000)...)
		var obs receives
		c := mustNew(t, q, func(context.Context, *sqsloop.Message) error {
			time.Sleep(time.Second)
			return nil
		}, Config{Concurrency: 2, WaitTime: time.Second, LatencyTarget: 10 * time.Second, Observer: &obs, Logger: quiet})
		stop := start(t, c)
		time.Sleep(time.Second)
		if e := obs.get(); e.QueueReadAt.IsZero() || e.Backlog != 1000 || e.BacklogPerConsumer != 1000 || e.RecommendedConsumers != 0 {
			t.Errorf("at start: %+v; want the start-up read: 1,000 visible, one consumer, no recommendation before a handler ran", e)
		}
		time.Sleep(61500 * time.Millisecond) // the last receive, at 62 s, carries the read of 60 s
		e := obs.get()
		if !e.QueueReadAt.Equal(e.Start.Add(-2*time.Second)) || e.Backlog < 850 || e.Backlog > 900 {
			t.Errorf("after 62 s: %+v; want the read of 60 s: about 880 visible", e)
		}
		if e.RecommendedConsumers < 40 || e.RecommendedConsumers > 50 {
			t.Errorf("after 62 s: %d consumers recommended, want about 45 ((2 + 880 × 1 s / 10 s) / 2)", e.RecommendedConsumers)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}
