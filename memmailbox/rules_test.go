package memmailbox_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// That memmailbox checks requests with sqsloop's rules, returns their errors
// unchanged and takes nothing of a bad request is the conformance suite's
// TestBatchLimits and TestRequestRulesAreSqsloops (TestMemmailboxConformance).

// memmailbox counts every duration in whole seconds, rounded up, as SQS does
// (sqsloop.WholeSeconds): a visibility timeout, a visibility change, a delay
// (the message's and the queue's) and a long poll.
func TestDurationsCountWholeSeconds(t *testing.T) {
	// hiddenFor fails t unless q's one message, just hidden by what, stays
	// hidden for exactly d, to the nanosecond.
	hiddenFor := func(t *testing.T, q *memmailbox.Queue, what string, d time.Duration) {
		t.Helper()
		time.Sleep(d - time.Nanosecond)
		if got := receive(t, q, 1, time.Minute); len(got) != 0 {
			t.Fatalf("%s: visible again before %v", what, d)
		}
		time.Sleep(time.Nanosecond)
		if got := receive(t, q, 1, time.Minute); len(got) != 1 {
			t.Fatalf("%s: still hidden after %v", what, d)
		}
	}
	t.Run("visibility timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
			send(t, q, bodies("a")...)
			m := receive(t, q, 1, 1500*time.Millisecond)
			if len(m) != 1 {
				t.Fatalf("received %d messages, want 1", len(m))
			}
			if m[0].VisibilityTimeout != 2*time.Second {
				t.Errorf("Message.VisibilityTimeout = %v, want 2s", m[0].VisibilityTimeout)
			}
			hiddenFor(t, q, "a 1.5 s visibility timeout", 2*time.Second)
		})
	})
	t.Run("visibility change", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
			send(t, q, bodies("a")...)
			m := receive(t, q, 1, time.Minute)
			if err := change(q, m[0], time.Nanosecond); err != nil {
				t.Fatal(err)
			}
			hiddenFor(t, q, "a 1 ns visibility change", time.Second)
		})
	})
	t.Run("delay", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs", Delay: 100 * time.Millisecond})
			send(t, q, sqsloop.OutgoingMessage{Body: "own", Delay: 1200 * time.Millisecond}, sqsloop.OutgoingMessage{Body: "queue's"})
			if got := q.Stats().Delayed; got != 2 {
				t.Fatalf("Delayed = %d, want 2", got)
			}
			time.Sleep(time.Second - time.Nanosecond)
			wantStats(t, q, 0, 0, 2)
			time.Sleep(time.Nanosecond) // the queue's 100 ms is 1 s
			wantStats(t, q, 1, 0, 1)
			time.Sleep(time.Second - time.Nanosecond)
			wantStats(t, q, 1, 0, 1)
			time.Sleep(time.Nanosecond) // the message's 1.2 s is 2 s
			wantStats(t, q, 2, 0, 0)
			if a, err := q.QueueAttributes(context.Background()); err != nil || a.Delay != time.Second {
				t.Errorf("QueueAttributes().Delay = %v (%v), want 1s", a.Delay, err)
			}
		})
	})
	t.Run("long poll", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
			start := time.Now()
			msgs, err := q.Receive(context.Background(), sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: 100 * time.Millisecond})
			if err != nil || len(msgs) != 0 {
				t.Fatalf("Receive = %d messages, %v; want none", len(msgs), err)
			}
			if waited := time.Since(start); waited != time.Second {
				t.Errorf("a 100 ms long poll waited %v, want 1s", waited)
			}
		})
	})
}
