package consumer

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// counted counts handler runs per body.
type counted struct {
	mu  sync.Mutex
	ran map[string]int
}

func (c *counted) handler(d time.Duration) sqsloop.Handler {
	return func(ctx context.Context, m *sqsloop.Message) error {
		if err := beatFor(ctx, d, 500*time.Millisecond, func() { heartbeat.Beat(ctx) }); err != nil {
			return err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.ran == nil {
			c.ran = map[string]int{}
		}
		c.ran[m.Body]++
		return nil
	}
}

func (c *counted) total() (runs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.ran {
		runs += n
	}
	return runs
}

// Drain mode without exit: Pause stops receiving at once (a long poll on
// the wire is cut short after the drain's grace), the in-flight handlers
// finish and are acked, and the consumer stays up, not ready, with nothing
// in flight, receiving nothing sent meanwhile; Resume receives again. It
// works again and again, and Shutdown then drains as usual: every message
// ran once.
func TestPauseFinishesInFlightAndStaysUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		var runs counted
		cfg := fast()
		cfg.Concurrency, cfg.WaitTime = 5, 20*time.Second
		c := mustNew(t, q, runs.handler(2*time.Second), cfg)
		stop := start(t, c)
		sent := 0
		for round := range 3 {
			send(t, q, bodies(sent + 3)[sent:]...)
			sent += 3
			time.Sleep(time.Second) // 3 running, a long poll open for the 2 free slots
			c.Pause()
			if p, n := c.Paused(); !p || n < 4 || n > 5 {
				t.Fatalf("round %d: Paused() = %v, %d right after Pause, want true, 4 or 5 in flight (3 running, the receives on the wire for the 2 free slots)", round, p, n)
			}
			if err := c.Ready(); err == nil || !strings.Contains(err.Error(), "paused") {
				t.Errorf("round %d: Ready() = %v while paused", round, err)
			}
			time.Sleep(1100 * time.Millisecond) // the handlers finish, their acks go
			if p, n := c.Paused(); !p || n != 0 {
				t.Fatalf("round %d: Paused() = %v, %d once the handlers finished, want true, 0 (drained)", round, p, n)
			}
			calls := c.Stats().ReceiveCalls
			send(t, q, "sent while paused")
			time.Sleep(30 * time.Second)
			if got := c.Stats().ReceiveCalls; got != calls {
				t.Errorf("round %d: %d receives while paused", round, got-calls)
			}
			if qs := q.Stats(); qs.Visible != 1 || qs.InFlight != 0 {
				t.Errorf("round %d: queue %+v while paused, want the one sent then visible, nothing in flight", round, qs)
			}
			if r := runs.total(); r != sent {
				t.Errorf("round %d: %d runs, want %d", round, r, sent)
			}
			c.Resume()
			if err := c.Ready(); err != nil {
				t.Errorf("round %d: Ready() = %v after Resume", round, err)
			}
			time.Sleep(3 * time.Second) // the one sent while paused runs
			sent++
			if r := runs.total(); r != sent {
				t.Errorf("round %d: %d runs after Resume, want %d", round, r, sent)
			}
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if st := c.Stats(); st.Received != int64(sent) || st.Acked != int64(sent) {
			t.Errorf("stats %+v: want %d received and acked, each once", st, sent)
		}
	})
}

// A consumer paused before Run starts paused: no receive until Resume.
// Shutdown while paused drains and ends Run with nil at once.
func TestPauseBeforeRunAndShutdownWhilePaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "a")
		var runs counted
		c := mustNew(t, q, runs.handler(time.Second), fast())
		c.Pause()
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(10 * time.Second)
		if st := c.Stats(); st.ReceiveCalls != 0 {
			t.Fatalf("%d receives by a consumer started paused", st.ReceiveCalls)
		}
		c.Resume()
		time.Sleep(2 * time.Second)
		if r := runs.total(); r != 1 {
			t.Fatalf("%d runs after Resume, want 1", r)
		}
		c.Pause()
		time.Sleep(time.Second)
		t0 := time.Now()
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-runErr; err != nil || time.Since(t0) != 0 {
			t.Fatalf("Run = %v %v after Shutdown while paused, want nil at once", err, time.Since(t0))
		}
		c.Resume() // after Run: nothing
	})
}

// A pause reports drained only once no receive call is on the wire: a long
// poll open when Pause came counts as one in flight until it came back,
// within the drain's grace, and what it brought (a message sent in that
// grace) was given back. Paused used to count held leases only, and said
// drained at once: a switch-over that stopped the process then would
// strand that message for its visibility timeout.
func TestPausedCountsAReceiveOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		var runs counted
		cfg := fast()
		cfg.Concurrency, cfg.WaitTime = 1, 20*time.Second
		c := mustNew(t, q, runs.handler(0), cfg)
		stop := start(t, c)
		time.Sleep(time.Second) // a long poll open, nothing received
		c.Pause()
		synctest.Wait() // the pause seen: the loop stopped, its long poll given the grace
		if p, n := c.Paused(); !p || n != 1 {
			t.Errorf("Paused() = %v, %d with a long poll on the wire, want true, 1", p, n)
		}
		send(t, q, "arrives in the grace") // the open long poll returns it
		time.Sleep(time.Second)
		if p, n := c.Paused(); !p || n != 0 {
			t.Errorf("Paused() = %v, %d once the receive came back, want true, 0 (drained)", p, n)
		}
		msgs, err := q.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute})
		if err != nil || len(msgs) != 1 {
			t.Errorf("the queue gave %d messages (%v), want the one the paused receive brought, given back", len(msgs), err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if runs.total() != 0 {
			t.Errorf("%d handler runs while paused, want 0", runs.total())
		}
	})
}
