package consumer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// lateMailbox holds the messages of its second receive until release is
// closed (or the call's context ends): the test releases them just after
// shutdown begins.
type lateMailbox struct {
	sqsloop.Mailbox
	calls   atomic.Int32
	release chan struct{}
}

func (l *lateMailbox) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	msgs, err := l.Mailbox.Receive(ctx, req)
	if l.calls.Add(1) == 2 {
		select {
		case <-l.release:
		case <-ctx.Done():
		}
	}
	return msgs, err
}

// (d) Shutdown with 10 received-but-unstarted messages makes all 10 visible
// again at once, lets the in-flight ones finish and ack, and Run returns.
func TestShutdownGivesBackUnstartedAndFinishesInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, bodies(20)...)
		mb := &lateMailbox{Mailbox: q, release: make(chan struct{})}
		cfg := fast()
		cfg.Concurrency = 20
		var finished atomic.Int32
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			err := beatFor(ctx, 10*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
			finished.Add(1)
			return err
		}, cfg)
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		if st := q.Stats(); st.InFlight != 20 || c.Stats().Started != 10 {
			t.Fatalf("before shutdown: queue %+v, consumer %+v; want 20 in flight, 10 started", st, c.Stats())
		}
		if !c.Running() {
			t.Fatal("Running() = false while receiving")
		}

		shutdownErr := make(chan error, 1)
		go func() { shutdownErr <- c.Shutdown(context.Background()) }()
		synctest.Wait() // no virtual time passes
		if c.Running() {
			t.Fatal("Running() = true during the drain")
		}
		close(mb.release) // the receive in flight comes back with 10 messages
		synctest.Wait()
		if st := q.Stats(); st.Visible != 10 || st.InFlight != 10 {
			t.Fatalf("at shutdown: queue %+v; want the 10 unstarted visible at once", st)
		}
		if n := finished.Load(); n != 0 {
			t.Fatalf("%d handlers finished before their work was done", n)
		}
		if err := <-shutdownErr; err != nil {
			t.Fatalf("Shutdown = %v", err)
		}
		if err := <-runErr; err != nil {
			t.Fatalf("Run = %v", err)
		}
		st := c.Stats()
		if st.Acked != 10 || st.GivenBack != 10 || st.Started != 10 || finished.Load() != 10 {
			t.Fatalf("stats %+v: want 10 acked in-flight, 10 given back unstarted", st)
		}
		if qs := q.Stats(); qs.Visible != 10 || qs.InFlight != 0 || qs.Deleted != 10 {
			t.Fatalf("after Run: queue %+v; want 10 deleted, 10 visible", qs)
		}
	})
}

// The drain keeps extending in-flight leases: a handler that outlives the
// visibility timeout during the drain is not redelivered.
func TestDrainKeepsExtendingLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "long")
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			return beatFor(ctx, 20*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
		}, fast())
		stop := start(t, c)
		time.Sleep(time.Second)
		if err := stop(); err != nil { // the drain takes the remaining 19 s
			t.Fatal(err)
		}
		if st := c.Stats(); st.Acked != 1 || st.LeasesLost != 0 || st.Redelivered != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// When the drain budget runs out, in-flight handlers are cancelled with
// ErrDrainTimeout, their messages given back at once, and Run says so.
func TestDrainBudgetCancelsHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "endless")
		cfg := fast()
		cfg.ShutdownTimeout = 5 * time.Second
		cause := make(chan error, 1)
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			err := beatFor(ctx, time.Hour, time.Second, func() { heartbeat.Beat(ctx) })
			cause <- context.Cause(ctx)
			return err
		}, cfg)
		stop := start(t, c)
		time.Sleep(time.Second)
		began := time.Now()
		if err := stop(); !errors.Is(err, ErrDrainTimeout) {
			t.Fatalf("Run = %v, want ErrDrainTimeout", err)
		}
		if d := time.Since(began); d != 5*time.Second {
			t.Fatalf("drain took %v, want the 5s budget", d)
		}
		if err := <-cause; !errors.Is(err, ErrDrainTimeout) {
			t.Fatalf("handler cause = %v, want ErrDrainTimeout", err)
		}
		if qs := q.Stats(); qs.Visible != 1 || qs.InFlight != 0 {
			t.Fatalf("queue %+v: want the interrupted message visible at once", qs)
		}
	})
}

// Shutdown's context ending first cancels in-flight handlers and returns its
// error; Run still completes.
func TestShutdownContextDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "endless")
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			return beatFor(ctx, time.Hour, time.Second, func() { heartbeat.Beat(ctx) })
		}, fast())
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := c.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
		}
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
		if qs := q.Stats(); qs.Visible != 1 {
			t.Fatalf("queue %+v: the interrupted message must be visible", qs)
		}
	})
}

func TestShutdownBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "x")
		c := mustNew(t, q, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := c.Stats(); st.Received != 0 {
			t.Fatalf("Run after Shutdown received %d", st.Received)
		}
	})
}

func TestSecondRunIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		c := mustNew(t, q, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		stop := start(t, c)
		synctest.Wait()
		if err := c.Run(context.Background()); !errors.Is(err, ErrAlreadyStarted) {
			t.Fatalf("second Run = %v, want ErrAlreadyStarted", err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}
