package consumer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// A panic is a failure like an error: the next delivery waits
// Backoff(receive count), not a moment.
func TestPanicWaitsForTheBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "boom")
		var mu sync.Mutex
		var attempts []time.Time
		cfg := fast()
		cfg.Backoff = func(int) time.Duration { return 10 * time.Second }
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			attempts = append(attempts, time.Now())
			mu.Unlock()
			if m.ReceiveCount == 1 {
				panic("kaboom")
			}
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(30 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(attempts) != 2 {
			t.Fatalf("%d attempts, want 2", len(attempts))
		}
		if d := attempts[1].Sub(attempts[0]); d < 10*time.Second || d > 12*time.Second {
			t.Fatalf("retry %v after the panic, want the 10 s back-off", d)
		}
		if st := c.Stats(); st.Panics != 1 || st.Nacked != 1 || st.Acked != 1 {
			t.Fatalf("stats %+v", st)
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
		q := newQueue(t, memmailbox.QueueConfig{})
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
		q := newQueue(t, memmailbox.QueueConfig{})
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

// Setting only VisibilityTimeout (SQS's default 30 s) is a valid config:
// Interval and Extension follow it.
func TestVisibilityTimeoutAloneIsValid(t *testing.T) {
	cfg := Config{VisibilityTimeout: 30 * time.Second}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate = %v", err)
	}
	d := cfg.withDefaults()
	if d.Visibility.Extension != 30*time.Second || d.Visibility.Interval != 6*time.Second {
		t.Fatalf("Extension %v, Interval %v; want 30s and 6s", d.Visibility.Extension, d.Visibility.Interval)
	}
	if d := (Config{}).withDefaults(); d.Visibility.Extension != 5*time.Minute || d.Visibility.Interval != time.Minute {
		t.Fatalf("defaults: Extension %v, Interval %v; want 5m and 1m", d.Visibility.Extension, d.Visibility.Interval)
	}
}
