package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestScaleOf(t *testing.T) {
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
		// Without a target, or before a handler ran: a slot per message
		// visible or in flight, (100 + 20) / 10.
		{"no target", 100, 20, 10, 10, 2 * time.Second, 0, 50, 12},
		{"no handler ran yet", 100, 20, 10, 10, 0, 10 * time.Second, 50, 12},
		{"idle", 0, 0, 0, 10, 2 * time.Second, 10 * time.Second, 0, 1},
		{"idle, no target", 0, 0, 0, 10, 0, 0, 0, 1},
		{"keeping up", 0, 35, 10, 10, 2 * time.Second, 10 * time.Second, 0, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			per, rec := scaleOf(sqsloop.QueueAttributes{ApproximateMessages: tc.backlog, ApproximateMessagesInFlight: tc.inFlight},
				tc.held, tc.slots, tc.took, tc.target)
			if per != tc.perConsumer || rec != tc.recommended {
				t.Errorf("got %v per consumer, %d recommended; want %v, %d", per, rec, tc.perConsumer, tc.recommended)
			}
		})
	}
}

// reads records the QueueEvents, and when the last receive that brought
// messages came back.
type reads struct {
	sqsloop.NopObserver
	mu         sync.Mutex
	events     []sqsloop.QueueEvent
	lastFilled time.Time
}

func (r *reads) QueueRead(e sqsloop.QueueEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *reads) Received(_ context.Context, e sqsloop.ReceiveEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(e.Messages) > 0 {
		r.lastFilled = e.Start.Add(e.Duration)
	}
}

func (r *reads) get() ([]sqsloop.QueueEvent, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sqsloop.QueueEvent(nil), r.events...), r.lastFilled
}

// countedReads counts the QueueAttributes calls on a mailbox and on the
// dead-letter queue it opens.
type countedReads struct {
	sqsloop.Mailbox
	calls, dlqCalls *atomic.Int64
}

func (c *countedReads) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	c.calls.Add(1)
	return c.Mailbox.(sqsloop.AttributesReader).QueueAttributes(ctx)
}

func (c *countedReads) OpenDeadLetterQueue(ctx context.Context) (sqsloop.Mailbox, error) {
	dlq, err := c.Mailbox.(sqsloop.DeadLetterQueueOpener).OpenDeadLetterQueue(ctx)
	if err != nil {
		return nil, err
	}
	return &countedReads{Mailbox: dlq, calls: c.dlqCalls}, nil
}

// The live signals follow the queue, not the receives: 100 messages of
// 1 s on 10 handlers with 20 s long polls. The first read, at start-up,
// has the recommended count already (a slot per message: 10); once the
// last messages are received the backlog reads 0 within one
// QueueReadInterval (5 s; memmailbox answers at once); a poison message's
// copy shows in the dead-letter queue's depth; and each queue is read once
// per interval, never more (on a main that read the counts every 30 s and
// reported them with the next receive, the backlog read 100 for the first
// 30 s).
func TestQueueSignalsAreLive(t *testing.T) {
	// The start-up read is Run's (the queue's visibility timeout adopted)
	// or the watcher's own (VisibilityTimeout set): one read either way.
	for _, vt := range []time.Duration{0, 30 * time.Second} {
		t.Run(fmt.Sprint("VisibilityTimeout ", vt), func(t *testing.T) { testQueueSignalsAreLive(t, vt) })
	}
}

func testQueueSignalsAreLive(t *testing.T, vt time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		q := newQueue(t, sqsloop.QueueSpec{MaxReceiveCount: 5})
		send(t, q, append(bodies(99), "poison")...)
		var obs reads
		var calls, dlqCalls atomic.Int64
		const period = 5 * time.Second
		c := mustNew(t, &countedReads{Mailbox: q, calls: &calls, dlqCalls: &dlqCalls}, func(_ context.Context, m *sqsloop.Message) error {
			if m.Body == "poison" {
				return sqsloop.Permanent(errors.New("cannot be done"))
			}
			time.Sleep(time.Second)
			return nil
		}, Config{Concurrency: 10, VisibilityTimeout: vt, LatencyTarget: 10 * time.Second, QueueReadInterval: period, Observer: &obs, Logger: quiet})
		stop := start(t, c)
		synctest.Wait()
		events, _ := obs.get()
		if len(events) != 1 {
			t.Fatalf("%d reads at start-up, want 1", len(events))
		}
		// Before the first receive (Run's read), or as it comes back.
		if e := events[0]; e.Err != nil || e.Backlog+e.InFlight != 100 || e.RecommendedConsumers != 10 || !e.DeadLettersRead || e.DeadLetters != 0 {
			t.Errorf("the start-up read: %+v; want 100 visible or in flight, 10 consumers recommended, an empty dead-letter queue", e)
		}
		time.Sleep(time.Minute + 2*time.Second)
		events, emptied := obs.get()
		if st := c.Stats(); st.Acked != 100 {
			t.Fatalf("%d acked after a minute, want 100", st.Acked)
		}
		var zeroAt time.Time
		for _, e := range events {
			if e.Err != nil || e.RecommendedConsumers < 1 {
				t.Errorf("read at %v: %+v; want a recommendation every time", e.Start.Sub(t0), e)
			}
			if e.Backlog == 0 && zeroAt.IsZero() {
				zeroAt = e.Start.Add(e.Duration)
			}
		}
		t.Logf("emptied at %v, backlog 0 read at %v, %d reads", emptied.Sub(t0), zeroAt.Sub(t0), len(events))
		if zeroAt.IsZero() || zeroAt.Sub(emptied) > period {
			t.Errorf("the queue was emptied at %v; the backlog read 0 at %v, want by %v (the interval later)",
				emptied.Sub(t0), zeroAt.Sub(t0), emptied.Add(period).Sub(t0))
		}
		if last := events[len(events)-1]; last.DeadLetters != 1 || !last.DeadLettersRead {
			t.Errorf("the last read: %+v; want the poison copy in the dead-letter queue", last)
		}
		// A read at start-up and one per interval: 13 in 62 s; the
		// start-up read also serves Run's check.
		if n, want := int64(len(events)), int64(time.Minute/period)+1; n != want || calls.Load() != want || dlqCalls.Load() != want {
			t.Errorf("%d events, %d reads of the queue, %d of the dead-letter queue in a minute; want %d of each", n, calls.Load(), dlqCalls.Load(), want)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestQueueReadIntervalRange(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, time.Millisecond, 2 * time.Hour} {
		if err := (Config{QueueReadInterval: d}).Validate(); !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Errorf("QueueReadInterval %v: Validate = %v, want an error naming it", d, err)
		}
	}
}
