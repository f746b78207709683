package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// failUntil fails receives with a transient error until until.
type failUntil struct {
	sqsloop.Mailbox
	until time.Time
}

func (f *failUntil) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	if time.Now().Before(f.until) {
		return nil, errors.New("connection refused")
	}
	return f.Mailbox.Receive(ctx, req)
}

// ExitWhenIdle: Run returns nil on its own once receives came back empty
// for that long with nothing in flight, after every message ran: counted
// from the last busy moment (a receive with messages, a handler running,
// a failed receive), so a long handler on an empty queue, and a mailbox
// that fails, do not end it early. It exits as the idle time is reached,
// within the receive grace (the long poll in flight cut short), not a long
// poll later.
func TestExitWhenIdle(t *testing.T) {
	for _, tc := range []struct {
		name      string
		handler   time.Duration // each handler's run
		failUntil time.Duration // receives fail until then
		n         int           // messages
		// the last busy moment, from the start, at the earliest and the
		// latest: Run returns between lastBusy+ExitWhenIdle and
		// lastBusyMax+ExitWhenIdle+maxReceiveGrace
		lastBusy, lastBusyMax time.Duration
	}{
		{"a backlog", time.Second, 0, 20, 4 * time.Second, 4 * time.Second}, // 5 handlers, 20 messages of 1 s
		{"a long handler", 30 * time.Second, 0, 1, 30 * time.Second, 30 * time.Second},
		// the last failure within the 1 s back-off before 20 s; the short
		// poll after it within 1 s after
		{"receives failing", time.Second, 20 * time.Second, 0, 19 * time.Second, 21 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				q := newQueue(t, sqsloop.QueueSpec{})
				send(t, q, bodies(tc.n)...)
				var runs counted
				cfg := fast()
				cfg.Concurrency, cfg.WaitTime, cfg.ExitWhenIdle = 5, 2*time.Second, 5*time.Second
				cfg.VisibilityTimeout = time.Minute
				cfg.Visibility.Interval, cfg.Visibility.Extension = 10*time.Second, time.Minute
				c := mustNew(t, &failUntil{Mailbox: q, until: t0.Add(tc.failUntil)}, runs.handler(tc.handler), cfg)
				if err := c.Run(context.Background()); err != nil {
					t.Fatalf("Run = %v", err)
				}
				took := time.Since(t0)
				t.Logf("Run returned nil after %v", took)
				if r := runs.total(); r != tc.n {
					t.Errorf("%d runs, want %d", r, tc.n)
				}
				if st := c.Stats(); st.Acked != int64(tc.n) {
					t.Errorf("%d acked, want %d", st.Acked, tc.n)
				}
				earliest, latest := tc.lastBusy+cfg.ExitWhenIdle, tc.lastBusyMax+cfg.ExitWhenIdle+maxReceiveGrace
				if took < earliest || took > latest {
					t.Errorf("Run returned after %v, want between %v and %v (last busy, then ExitWhenIdle, then the receive grace)",
						took, earliest, latest)
				}
			})
		})
	}
}

// ExitWhenIdle 2 s with 20 s long polls: Run returns within 3 s of the
// last ack (the drain cuts the long poll in flight short), on memmailbox
// answering at once and on a mailbox 100 ms away. On a main that checked
// the idle time only as a receive came back it returned 20 s after the
// last ack, a whole long poll.
func TestExitWhenIdleCutsTheLongPollShort(t *testing.T) {
	for _, rtt := range []time.Duration{0, 100 * time.Millisecond} {
		t.Run(fmt.Sprint("round trip ", rtt), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newQueue(t, sqsloop.QueueSpec{})
				send(t, q, bodies(3)...)
				var acks ackTimes
				cfg := fast()
				cfg.WaitTime, cfg.ExitWhenIdle, cfg.Observer = 20*time.Second, 2*time.Second, &acks
				c := mustNew(t, &slowMailbox{Mailbox: q, rtt: rtt}, func(context.Context, *sqsloop.Message) error {
					time.Sleep(500 * time.Millisecond)
					return nil
				}, cfg)
				if err := c.Run(context.Background()); err != nil {
					t.Fatalf("Run = %v", err)
				}
				after := time.Since(time.Unix(0, acks.last.Load()))
				t.Logf("Run returned %v after the last ack", after)
				if st := c.Stats(); st.Acked != 3 {
					t.Fatalf("%d acked, want 3", st.Acked)
				}
				if after > 3*time.Second {
					t.Errorf("Run returned %v after the last ack, want within 3 s (ExitWhenIdle 2 s and a round trip)", after)
				}
			})
		})
	}
}

// slowMailbox answers every call rtt late.
type slowMailbox struct {
	sqsloop.Mailbox
	rtt time.Duration
}

func (s *slowMailbox) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	time.Sleep(s.rtt / 2)
	msgs, err := s.Mailbox.Receive(ctx, req)
	time.Sleep(s.rtt / 2)
	return msgs, err
}

func (s *slowMailbox) Delete(ctx context.Context, handles []string) ([]error, error) {
	time.Sleep(s.rtt)
	return s.Mailbox.Delete(ctx, handles)
}

// ackTimes keeps when the last delete call returned.
type ackTimes struct {
	sqsloop.NopObserver
	last atomic.Int64
}

func (a *ackTimes) Settled(e sqsloop.SettleEvent) {
	if e.Op == sqsloop.OpDelete {
		a.last.Store(e.Start.Add(e.Duration).UnixNano())
	}
}

// A pause is not an empty queue: paused for a minute, the consumer does not
// exit; the count starts again at Resume.
func TestExitWhenIdleWaitsOutAPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		cfg := fast()
		cfg.ExitWhenIdle = 5 * time.Second
		c := mustNew(t, q, func(context.Context, *sqsloop.Message) error { return nil }, cfg)
		c.Pause()
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Minute)
		select {
		case err := <-runErr:
			t.Fatalf("Run = %v while paused", err)
		default:
		}
		t0 := time.Now()
		c.Resume()
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
		if took := time.Since(t0); took < 5*time.Second || took > 7*time.Second {
			t.Errorf("Run returned %v after Resume, want 5-7 s", took)
		}
	})
}

func TestExitWhenIdleMustNotBeNegative(t *testing.T) {
	err := Config{ExitWhenIdle: -time.Second}.Validate()
	if !errors.Is(err, sqsloop.ErrInvalidArgument) || err == nil || !strings.Contains(err.Error(), "ExitWhenIdle") {
		t.Errorf("Validate = %v, want an error naming ExitWhenIdle", err)
	}
}
