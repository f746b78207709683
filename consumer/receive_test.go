package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// failingMailbox fails every receive with a transient error.
type failingMailbox struct {
	sqsloop.Mailbox
	calls atomic.Int32
	err   error
}

func (f *failingMailbox) Receive(context.Context, sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	f.calls.Add(1)
	return nil, f.err
}

func TestReceiveErrorsBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mb := &failingMailbox{Mailbox: newQueue(t, sqsloop.QueueSpec{}), err: errors.New("connection reset")}
		c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		stop := start(t, c)
		time.Sleep(60 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		// Doubling from 100 ms to 1 s with full jitter, one receive at a
		// time: about two tries a second, not a hot loop.
		if n := mb.calls.Load(); n < 60 || n > 200 {
			t.Fatalf("%d receives in 60 s of failures", n)
		}
	})
}

func TestClosedMailboxEndsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mb := &failingMailbox{Mailbox: newQueue(t, sqsloop.QueueSpec{}), err: fmt.Errorf("x: %w", sqsloop.ErrMailboxClosed)}
		c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		if err := c.Run(context.Background()); !errors.Is(err, sqsloop.ErrMailboxClosed) {
			t.Fatalf("Run = %v, want ErrMailboxClosed", err)
		}
	})
}

// slowReceives makes every receive take a 100 ms round trip and records how
// many are in flight at once.
type slowReceives struct {
	sqsloop.Mailbox
	mu            sync.Mutex
	inFlight, max int
}

func (s *slowReceives) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	s.mu.Lock()
	s.inFlight++
	s.max = max(s.max, s.inFlight)
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.inFlight--; s.mu.Unlock() }()
	time.Sleep(100 * time.Millisecond)
	return s.Mailbox.Receive(ctx, req)
}

// With fast handlers and a slow round trip, the receive-ahead keeps more
// receives on the wire than the free handler slots alone would (40 slots /
// 10 = 4), up to maxReceivers; handlers never exceed Concurrency.
func TestReceiveAheadFillsTheRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(2000)...)
		mb := &slowReceives{Mailbox: q}
		cfg := fast()
		cfg.Concurrency = 40
		var running, peak, handled atomic.Int32
		all := make(chan time.Time, 1)
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(10 * time.Millisecond)
			running.Add(-1)
			if handled.Add(1) == 2000 {
				all <- time.Now()
			}
			return nil
		}, cfg)
		began := time.Now()
		stop := start(t, c)
		done := <-all
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mb.mu.Lock()
		defer mb.mu.Unlock()
		if mb.max != maxReceivers {
			t.Fatalf("%d receives in flight at most, want %d", mb.max, maxReceivers)
		}
		// 32 receives of 10 per 100 ms round trip: 3,200 messages a second
		// (16 receives: 1,600; 4 receives, without receive-ahead: 400).
		if took := done.Sub(began); took > time.Second {
			t.Fatalf("2000 messages took %v, want ≤ 1s (32 receives on the wire)", took)
		}
		if p := peak.Load(); p > 40 {
			t.Fatalf("%d handlers at once, want ≤ 40", p)
		}
		if st := c.Stats(); st.Acked != 2000 {
			t.Fatalf("stats %+v: want all 2000 acked", st)
		}
	})
}

// greedyMailbox ignores MaxMessages (a buggy or hand-written Mailbox).
type greedyMailbox struct{ sqsloop.Mailbox }

func (g greedyMailbox) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	req.MaxMessages = 10
	return g.Mailbox.Receive(ctx, req)
}

func TestOverfullReceiveIsGivenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(30)...)
		cfg := fast()
		cfg.Concurrency = 2
		c := mustNew(t, greedyMailbox{q}, func(ctx context.Context, m *sqsloop.Message) error {
			time.Sleep(100 * time.Millisecond)
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(10 * time.Second)
		ret := make(chan error, 1)
		go func() { ret <- stop() }()
		select {
		case <-ret:
		case <-time.After(time.Hour):
			t.Fatalf("Run hung; stats %+v", c.Stats())
		}
		if st := c.Stats(); st.Acked != 30 || st.Started != 30 {
			t.Fatalf("stats %+v: want all 30 handled once and acked", st)
		}
	})
}

// Receives denied access end Run after MaxAccessDenied tries, with the
// error, instead of retrying forever.
func TestDeniedReceivesEndRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mb := &failingMailbox{Mailbox: newQueue(t, sqsloop.QueueSpec{}), err: errors.Join(errors.New("AccessDenied"), sqsloop.ErrAccessDenied)}
		c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		if err := c.Run(t.Context()); !errors.Is(err, sqsloop.ErrAccessDenied) {
			t.Fatalf("Run = %v, want ErrAccessDenied", err)
		}
		if n := mb.calls.Load(); n != 5 {
			t.Fatalf("%d receives, want 5 (visibility.MaxAccessDenied)", n)
		}
		if running(c) {
			t.Fatal("still receiving after Run returned")
		}
	})
}

// Config.MessageAttributeNames reaches every receive: handlers see only the
// message attributes asked for.
func TestMessageAttributeNamesReachTheReceive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		if _, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{
			"keep.me": {DataType: "String", StringValue: "1"},
			"drop":    {DataType: "String", StringValue: "2"},
		}}}); err != nil {
			t.Fatal(err)
		}
		got := make(chan map[string]sqsloop.MessageAttribute, 1)
		cfg := fast()
		cfg.MessageAttributeNames = []string{"keep.*"}
		c := mustNew(t, q, func(_ context.Context, m *sqsloop.Message) error { got <- m.MessageAttributes; return nil }, cfg)
		stop := start(t, c)
		attrs := <-got
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if len(attrs) != 1 || attrs["keep.me"].StringValue != "1" {
			t.Fatalf("handler saw attributes %v, want only keep.me", attrs)
		}
	})
}
