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

// A failing message is nacked with the back-off and, after the queue's
// maxReceiveCount, moved to the dead-letter queue by SQS semantics.
func TestFailingMessageGoesToTheDLQ(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := new(memmailbox.Broker)
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3})
		if err != nil {
			t.Fatal(err)
		}
		dlq := b.Queue("jobs-dlq")
		send(t, q, "poison")
		var mu sync.Mutex
		var attempts []time.Time
		cfg := fast()
		cfg.Backoff = sqsloop.ExponentialBackoff(2*time.Second, time.Minute)
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			attempts = append(attempts, time.Now())
			mu.Unlock()
			return errors.New("always fails")
		}, cfg)
		stop := start(t, c)
		time.Sleep(30 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(attempts) != 3 {
			t.Fatalf("%d attempts, want 3 (maxReceiveCount)", len(attempts))
		}
		// Back-off 2 s after the first failure, 4 s after the second.
		if d := attempts[1].Sub(attempts[0]); d < 2*time.Second || d > 3*time.Second {
			t.Fatalf("second attempt %v after the first, want ~2s", d)
		}
		if d := attempts[2].Sub(attempts[1]); d < 4*time.Second || d > 5*time.Second {
			t.Fatalf("third attempt %v after the second, want ~4s", d)
		}
		if st := dlq.Stats(); st.Visible != 1 {
			t.Fatalf("DLQ %+v: want the poison message", st)
		}
		if st := c.Stats(); st.Failed != 3 || st.Nacked != 3 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// Messages of one FIFO message group are handled in order, one at a time;
// groups run in parallel.
func TestFIFOGroupsKeepOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, ContentBasedDeduplication: true})
		var out []sqsloop.OutgoingMessage
		for i := range 10 {
			out = append(out, sqsloop.OutgoingMessage{Body: fmt.Sprint(i), MessageGroupID: fmt.Sprint("g", i%2)})
		}
		if _, err := q.Send(t.Context(), out); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		order := map[string][]string{}
		busy := map[string]bool{}
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			if busy[m.MessageGroupID] {
				t.Errorf("two messages of group %s at once", m.MessageGroupID)
			}
			busy[m.MessageGroupID] = true
			order[m.MessageGroupID] = append(order[m.MessageGroupID], m.Body)
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			busy[m.MessageGroupID] = false
			mu.Unlock()
			return nil
		}, fast())
		stop := start(t, c)
		time.Sleep(5 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(order["g0"], order["g1"]); got != "[0 2 4 6 8] [1 3 5 7 9]" {
			t.Fatalf("order %s", got)
		}
	})
}

// FIFO: a run of one group's messages; short handlers that never beat
// (allowed: each finishes well inside the visibility timeout).
func TestFIFOMessagesWaitingBehindTheirGroupKeepTheirLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, ContentBasedDeduplication: true})
		var out []sqsloop.OutgoingMessage
		for i := range 4 {
			out = append(out, sqsloop.OutgoingMessage{Body: string(rune('a' + i)), MessageGroupID: "g"})
		}
		if _, err := q.Send(t.Context(), out); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		handled := map[string]int{}
		busy, overlap := 0, 0
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			handled[m.Body]++
			busy++
			if busy > 1 {
				overlap++
			}
			mu.Unlock()
			time.Sleep(2 * time.Second) // < 3 s visibility timeout
			mu.Lock()
			busy--
			mu.Unlock()
			return nil
		}, fast())
		stop := start(t, c)
		time.Sleep(30 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		st := c.Stats()
		t.Logf("handled=%v overlap=%d stats: Received=%d Redelivered=%d Acked=%d AckFailed=%d LeasesLost=%d",
			handled, overlap, st.Received, st.Redelivered, st.Acked, st.AckFailed, st.LeasesLost)
		if st.LeasesLost != 0 || st.Redelivered != 0 || overlap != 0 {
			t.Errorf("messages waiting behind their group's head lost their leases")
		}
	})
}

// A handler beating every second under a 3 s visibility timeout for 60 s
// of virtual time is never redelivered, while a second consumer polls.
func TestBeatingHandlerIsNeverRedelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
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

// A handler that stops beating loses its message to another consumer
// within visibility timeout + interval of its last beat.
func TestStuckHandlerLosesItsMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
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

// With 100 in-flight beating handlers, extensions go out in at most 10
// batch calls per interval.
func TestHundredHandlersAtMostTenCallsPerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
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

// A receipt handle that expires during processing stops its extension,
// fires OnLeaseLost, and the handler still completes.
func TestExpiredReceiptHandleDuringProcessing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "x")
		var mu sync.Mutex
		var lost []error
		cfg := fast()
		cfg.Visibility.OnLeaseLost = func(_ *sqsloop.Message, err error) { mu.Lock(); lost = append(lost, err); mu.Unlock() }
		completed := false
		var extAtLoss int64
		var c *Consumer
		c = mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			if err := beatFor(ctx, 4*time.Second, time.Second, func() { heartbeat.Beat(ctx) }); err != nil {
				return err
			}
			// Someone else makes the message visible and receives it: this
			// receive's handle is now stale.
			if _, err := q.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: m.ReceiptHandle}}); err != nil {
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
		if len(lost) != 1 || !errors.Is(lost[0], sqsloop.ErrReceiptHandleExpired) {
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
		q := newQueue(t, sqsloop.QueueSpec{})
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

// flakyDeletes fails the first failures delete calls with a transient
// error; with applied, after the delete was applied (the answer lost).
type flakyDeletes struct {
	sqsloop.Mailbox
	applied  bool
	mu       sync.Mutex
	failures int
}

func (f *flakyDeletes) Delete(ctx context.Context, handles []string) ([]error, error) {
	f.mu.Lock()
	fail := f.failures > 0
	f.failures--
	f.mu.Unlock()
	if !fail {
		return f.Mailbox.Delete(ctx, handles)
	}
	if f.applied {
		if _, err := f.Mailbox.Delete(ctx, handles); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("read: connection reset by peer")
}

// A failed ack is retried while the lease is kept alive: the message runs
// once and ends deleted, however long the deletes keep failing.
func TestFailedAckIsRetriedWhileTheLeaseHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "job")
		mb := &flakyDeletes{Mailbox: q, failures: 40} // retries back off to Interval/2: ~20 s of failures
		var mu sync.Mutex
		runs := 0
		c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error {
			mu.Lock()
			runs++
			mu.Unlock()
			return nil
		}, fast())
		stop := start(t, c)
		time.Sleep(time.Minute)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if runs != 1 {
			t.Fatalf("%d runs, want 1: a failed ack must not cost a redelivery", runs)
		}
		if qs := q.Stats(); qs.Deleted != 1 || qs.Visible+qs.InFlight != 0 {
			t.Fatalf("queue %+v: want the message deleted", qs)
		}
		if st := c.Stats(); st.AckRetries != 40 || st.Acked != 1 || st.LeasesLost != 0 || st.Extensions < 5 {
			t.Fatalf("stats %+v: want the ack retried 40 times, the lease extended meanwhile and never lost", st)
		}
	})
}

// A delete applied whose answer was lost is not a second run either: the
// retry finds the message gone.
func TestAckWhoseAnswerWasLostRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(10)...)
		mb := &flakyDeletes{Mailbox: q, failures: 3, applied: true}
		var s seen
		c := mustNew(t, mb, func(_ context.Context, m *sqsloop.Message) error { s.add(m.Body); return nil }, fast())
		stop := start(t, c)
		time.Sleep(time.Minute)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		for _, b := range bodies(10) {
			if n := s.count(b); n != 1 {
				t.Fatalf("%s ran %d times, want once", b, n)
			}
		}
		if qs := q.Stats(); qs.Deleted != 10 || qs.Visible+qs.InFlight != 0 {
			t.Fatalf("queue %+v: want all 10 deleted", qs)
		}
	})
}
