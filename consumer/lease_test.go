package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

// (a) A handler beating every second under a 3 s visibility timeout for 60 s
// of virtual time is never redelivered, while a second consumer polls.
func TestBeatingHandlerIsNeverRedelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "long")
		var s seen
		worker := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			s.add(m.Body)
			return beatFor(ctx, 60*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
		}, fast())
		rival := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			s.add("rival:" + m.Body)
			return nil
		}, fast())
		stopW := start(t, worker)
		synctest.Wait() // the worker holds the message before the rival polls
		stopR := start(t, rival)

		time.Sleep(65 * time.Second)
		if err := stopR(); err != nil {
			t.Fatal(err)
		}
		if err := stopW(); err != nil {
			t.Fatal(err)
		}
		if n := s.count("rival:long"); n != 0 {
			t.Fatalf("the rival received the message %d times", n)
		}
		if n := s.count("long"); n != 1 {
			t.Fatalf("the worker handled the message %d times, want 1", n)
		}
		st := worker.Stats()
		if st.Acked != 1 || st.LeasesLost != 0 || st.Extensions < 20 {
			t.Fatalf("stats %+v: want 1 acked, no lease lost, ≥ 20 extensions", st)
		}
		if qs := q.Stats(); qs.Visible+qs.InFlight != 0 || qs.Deleted != 1 {
			t.Fatalf("queue %+v: want the message deleted", qs)
		}
	})
}

// (b) A handler that stops beating loses its message to another consumer
// within visibility timeout + interval of its last beat.
func TestStuckHandlerLosesItsMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "stuck")
		var lastBeat time.Time
		release := make(chan struct{})
		one := fast()
		one.Concurrency = 1 // while stuck, it cannot take the message back itself
		stuck := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			beatFor(ctx, 5*time.Second, time.Second, func() { heartbeat.Beat(ctx); lastBeat = time.Now() })
			<-release // stuck: no more beats
			return nil
		}, one)
		stopS := start(t, stuck)
		synctest.Wait()

		got := make(chan time.Time, 1)
		rival := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			got <- time.Now()
			return nil
		}, fast())
		stopR := start(t, rival)
		var at time.Time
		select {
		case at = <-got:
		case <-time.After(time.Minute):
			t.Fatal("the rival never received the stuck message")
		}
		if limit := 3*time.Second + time.Second; at.Sub(lastBeat) > limit {
			t.Fatalf("redelivered %v after the last beat, want ≤ %v", at.Sub(lastBeat), limit)
		}
		close(release)
		if err := stopR(); err != nil {
			t.Fatal(err)
		}
		if err := stopS(); err != nil {
			t.Fatal(err)
		}
		if st, qs := stuck.Stats(), q.Stats(); st.LeasesLost != 1 || st.Acked != 0 || st.LateAcked != 1 || qs.Deleted != 1 || qs.StaleDeletes != 1 {
			t.Fatalf("stuck consumer stats %+v, queue %+v: want its lease lost, and its late ack accepted but deleting nothing (as on SQS), counted apart", st, qs)
		}
	})
}

// countingMailbox counts ChangeVisibility calls per second of virtual time.
type countingMailbox struct {
	sqsloop.Mailbox
	mu      sync.Mutex
	changes map[int64]int
	entries int
}

func (c *countingMailbox) ChangeVisibility(ctx context.Context, ch []sqsloop.VisibilityChange) ([]error, error) {
	c.mu.Lock()
	if c.changes == nil {
		c.changes = map[int64]int{}
	}
	c.changes[time.Now().Unix()]++
	c.entries += len(ch)
	c.mu.Unlock()
	return c.Mailbox.ChangeVisibility(ctx, ch)
}

// (c) With 100 in-flight beating handlers, extensions go out in at most 10
// batch calls per interval.
func TestHundredHandlersAtMostTenCallsPerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, bodies(100)...)
		mb := &countingMailbox{Mailbox: q}
		cfg := fast()
		cfg.Concurrency = 100
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			return beatFor(ctx, 30*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
		}, cfg)
		stop := start(t, c)
		time.Sleep(35 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		st := c.Stats()
		if st.Acked != 100 || st.LeasesLost != 0 || st.Redelivered != 0 {
			t.Fatalf("stats %+v: want 100 acked, none lost or redelivered", st)
		}
		mb.mu.Lock()
		defer mb.mu.Unlock()
		for sec, n := range mb.changes {
			if n > 10 {
				t.Fatalf("%d ChangeMessageVisibilityBatch calls in the second starting at %d, want ≤ 10", n, sec)
			}
		}
		if st.Extensions < 100*9 {
			t.Fatalf("%d extensions for 100 handlers over 30 s", st.Extensions)
		}
	})
}

// (e) A receipt handle that expires during processing stops its extension,
// fires OnLeaseLost, and the handler still completes.
func TestExpiredReceiptHandleDuringProcessing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "x")
		var mu sync.Mutex
		var lost []visibility.LeaseLost
		cfg := fast()
		cfg.Visibility.OnLeaseLost = func(ll visibility.LeaseLost) { mu.Lock(); lost = append(lost, ll); mu.Unlock() }
		completed := false
		var extAtLoss int64
		var c *Consumer
		c = mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			if err := beatFor(ctx, 4*time.Second, time.Second, func() { heartbeat.Beat(ctx) }); err != nil {
				return err
			}
			// Someone else makes the message visible and receives it: this
			// receive's handle is now stale.
			if err := m.Nack(ctx, 0); err != nil {
				return err
			}
			other, err := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Hour})
			if err != nil || len(other) != 1 {
				return fmt.Errorf("rival receive: %v %d", err, len(other))
			}
			beatFor(ctx, 3*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
			extAtLoss = c.Stats().Extensions
			beatFor(ctx, 10*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
			completed = true
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(30 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(lost) != 1 || !errors.Is(lost[0].Err, sqsloop.ErrReceiptHandleExpired) {
			t.Fatalf("OnLeaseLost got %+v, want one ErrReceiptHandleExpired", lost)
		}
		if !completed {
			t.Fatal("the handler did not complete")
		}
		st := c.Stats()
		if st.Extensions != extAtLoss {
			t.Fatalf("extensions went on after the loss: %d then %d", extAtLoss, st.Extensions)
		}
		if qs := q.Stats(); st.AckFailed != 0 || st.Acked != 0 || st.LateAcked != 1 || qs.Deleted != 0 || qs.StaleDeletes != 1 {
			t.Fatalf("stats %+v, queue %+v: the stale handle's ack succeeds (as on SQS), deletes nothing, and counts as late", st, qs)
		}
	})
}

func TestCancelOnLeaseLostCancelsTheHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "y")
		cfg := fast()
		cfg.Visibility.CancelOnLeaseLost = true
		cause := make(chan error, 1)
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			<-ctx.Done() // never beats: the lease lapses
			select {
			case cause <- context.Cause(ctx):
			default: // the redelivery's handler
			}
			return ctx.Err()
		}, cfg)
		stop := start(t, c)
		time.Sleep(10 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if err := <-cause; !errors.Is(err, visibility.ErrLeaseLost) || !errors.Is(err, visibility.ErrLeaseLapsed) {
			t.Fatalf("handler context cause = %v, want ErrLeaseLost/ErrLeaseLapsed", err)
		}
	})
}
