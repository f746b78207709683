package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// A handler that panics is retried after the back-off, not at once: the
// nack that the panic becomes hides the message for Backoff's delay, on the
// server, with a 20 s long poll waiting for it.
func TestE2EPanicWaitsForTheBackoff(t *testing.T) {
	t.Parallel()
	const backoff = 3 * time.Second
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: longLease})
		defer cleanup()
		mailboxtest.SendBodies(ctx, t, q.Mailbox, "panics once")

		var mu sync.Mutex
		var runs []time.Time
		second := make(chan struct{})
		cfg := e2eConfig()
		cfg.WaitTime = sqsloop.MaxWaitTime
		cfg.VisibilityTimeout = longLease
		cfg.Backoff = func(int) time.Duration { return backoff }
		c, err := consumer.New(q.Mailbox, func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			runs = append(runs, time.Now())
			n := len(runs)
			mu.Unlock()
			if n == 1 {
				panic("first run")
			}
			if n == 2 {
				close(second)
			}
			return nil
		}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		stop := runConsumer(t, c)
		if !awaitClosed(second, backoff+patience) {
			t.Fatalf("%s: no second run within %v: stats %+v", h.Name(), backoff+patience, c.Stats())
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		gap := runs[1].Sub(runs[0])
		mu.Unlock()
		st := c.Stats()
		t.Logf("%s: second run %v after the panic; stats %+v", h.Name(), gap.Round(time.Millisecond), st)
		if gap < backoff {
			t.Fatalf("%s: second run %v after the panic, want ≥ the %v back-off", h.Name(), gap, backoff)
		}
		if st.Panics != 1 || st.Nacked != 1 || st.Acked != 1 || st.Redelivered != 1 {
			t.Fatalf("%s: stats %+v: want one panic nacked, one redelivery acked", h.Name(), st)
		}
	})
}
