package consumer

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestPanicIsAFailureAndTheLoopGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "boom", "fine")
		var handled atomic.Int32
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			handled.Add(1)
			if m.Body == "boom" && m.ReceiveCount == 1 {
				panic("kaboom")
			}
			return nil
		}, fast())
		stop := start(t, c)
		time.Sleep(10 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if st := c.Stats(); st.Panics != 1 || st.Acked != 2 || st.Nacked != 1 {
			t.Fatalf("stats %+v: want one panic nacked, then both acked", st)
		}
	})
}

// A panic is a failure like an error: the next delivery waits
// Backoff(receive count), not a moment.
func TestPanicWaitsForTheBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
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
