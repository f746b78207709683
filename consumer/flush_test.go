package consumer

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// lockedDeletes is a mailbox whose deletes wait, within their context,
// until until: a SQLite file whose write lock another connection holds.
type lockedDeletes struct {
	sqsloop.Mailbox
	until time.Time
}

func (l *lockedDeletes) Delete(ctx context.Context, handles []string) ([]error, error) {
	t := time.NewTimer(time.Until(l.until))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return l.Mailbox.Delete(ctx, handles)
}

// The acks decided during the drain are sent within the drain budget, not
// within 1 s: 8 handlers (default settings, a 25 s budget) finish 1 s into
// the drain while the mailbox's deletes wait for a lock held until 2.5 s.
// Every ack is sent once the lock is let go, and Run returns then, nil; the
// drain's last line says no ack was left unsent. (Before, the lease owner
// flushed for 1 s: Run returned at 2 s with none of the 8 acked.) With a
// 1.2 s Shutdown deadline instead, the flush ends 1 s after the handlers
// are done (minFlush), and the 8 unsent acks are counted and logged.
func TestDrainSendsAcksWithinTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline time.Duration // of Shutdown's context; 0: none
		acked    int64
		took     time.Duration // from the start to Run's return
	}{
		{"25 s budget", 0, 8, 2500 * time.Millisecond},
		{"Shutdown's deadline", 1200 * time.Millisecond, 0, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				q := newQueue(t, sqsloop.QueueSpec{})
				send(t, q, bodies(8)...)
				var logs bytes.Buffer
				c := mustNew(t, &lockedDeletes{Mailbox: q, until: t0.Add(2500 * time.Millisecond)},
					func(ctx context.Context, m *sqsloop.Message) error {
						heartbeat.Beat(ctx)
						time.Sleep(time.Second)
						return nil
					}, Config{Concurrency: 8, WaitTime: time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				runErr := make(chan error, 1)
				go func() { runErr <- c.Run(context.Background()) }()
				synctest.Wait() // the 8 handlers run
				ctx := context.Background()
				if tc.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.deadline)
					defer cancel()
				}
				go func() { _ = c.Shutdown(ctx) }()
				if err := <-runErr; err != nil {
					t.Fatalf("Run = %v", err)
				}
				took := time.Since(t0)
				st := c.Stats()
				t.Logf("Run returned after %v: %d acked, %d unsent, %d ack retries", took, st.Acked, st.AckUnsent, st.AckRetries)
				if st.Succeeded != 8 || st.Acked != tc.acked || st.AckUnsent != 8-tc.acked || took != tc.took {
					t.Errorf("after %v: %d succeeded, %d acked, %d unsent; want 8, %d acked, the rest unsent, after %v",
						took, st.Succeeded, st.Acked, st.AckUnsent, tc.acked, tc.took)
				}
				want := `msg="consumer: drain ended" given_back=0 finished=8 abandoned=0 acks_unsent=` + map[bool]string{true: "0", false: "8"}[tc.acked == 8]
				if !strings.Contains(logs.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, logs.String())
				}
				if qs := q.Stats(); tc.acked == 8 && (qs.Visible != 0 || qs.InFlight != 0) {
					t.Errorf("queue %+v: want every message deleted", qs)
				}
			})
		})
	}
}

// Interrupt (a second signal) ends the drain's flush: with deletes locked
// for a minute, Run returns once Interrupt has had its 1 s, not when the
// 25 s budget ends.
func TestInterruptEndsTheFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(3)...)
		c := mustNew(t, &lockedDeletes{Mailbox: q, until: t0.Add(time.Minute)},
			func(ctx context.Context, m *sqsloop.Message) error { return nil },
			Config{WaitTime: time.Second, Logger: quiet})
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(100 * time.Millisecond) // handled; the acks wait for the lock
		go func() { _ = c.Shutdown(context.Background()) }()
		time.Sleep(500 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c.Interrupt(ctx)
		if err := <-runErr; err != nil {
			t.Fatalf("Run = %v", err)
		}
		if took := time.Since(t0); took != 1600*time.Millisecond {
			t.Errorf("Run returned after %v, want 1.6s: when Interrupt's second ended", took)
		}
		if st := c.Stats(); st.AckUnsent != 3 {
			t.Errorf("stats %+v: want the 3 acks unsent", st)
		}
	})
}
