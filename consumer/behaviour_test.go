package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

// (f) Every invalid config returns an error that names the field.
func TestInvalidConfigNamesTheField(t *testing.T) {
	q := newQueue(t, memmailbox.QueueConfig{})
	noop := func(context.Context, *sqsloop.Message) error { return nil }
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{Concurrency: -1}, "Concurrency:"},
		{Config{Concurrency: MaxConcurrency + 1}, "Concurrency:"},
		{Config{MaxMessages: 11}, "MaxMessages:"},
		{Config{MaxMessages: -1}, "MaxMessages:"},
		{Config{VisibilityTimeout: 500 * time.Millisecond}, "VisibilityTimeout:"},
		{Config{VisibilityTimeout: 13 * time.Hour}, "VisibilityTimeout:"},
		{Config{WaitTime: 21 * time.Second}, "WaitTime:"},
		{Config{WaitTime: -time.Second}, "WaitTime:"},
		{Config{ShutdownTimeout: -time.Second}, "ShutdownTimeout:"},
		{Config{Visibility: visibility.Config{AckWindow: 2 * time.Second}}, "Visibility.AckWindow:"},
		{Config{Middleware: []Middleware{nil}}, "Middleware[0]:"},
		{Config{Visibility: visibility.Config{Interval: -1}}, "Visibility.Interval:"},
		{Config{Visibility: visibility.Config{Extension: 13 * time.Hour}}, "Visibility.Extension:"},
		{Config{VisibilityTimeout: 90 * time.Second, Visibility: visibility.Config{Interval: time.Minute}}, "Visibility.Interval:"}, // 60 s ≥ 90 s/2
	} {
		t.Run(tc.field, func(t *testing.T) {
			_, err := New(q, noop, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("New(%+v) = %v, want an error naming %s", tc.cfg, err, tc.field)
			}
		})
	}
	if _, err := New(nil, nil, Config{}); err == nil || !errors.Is(err, sqsloop.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "mailbox:") || !strings.Contains(err.Error(), "handler:") {
		t.Fatalf("New(nil, nil) = %v", err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
}

// A failing message is nacked with the back-off and, after the queue's
// maxReceiveCount, moved to the dead-letter queue by SQS semantics.
func TestFailingMessageGoesToTheDLQ(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memmailbox.NewBroker()
		defer b.Close()
		dlq, _ := b.CreateQueue("dlq", memmailbox.QueueConfig{})
		q, err := b.CreateQueue("jobs", memmailbox.QueueConfig{MaxReceiveCount: 3, DeadLetterQueue: "dlq"})
		if err != nil {
			t.Fatal(err)
		}
		send(t, q, "poison")
		var mu sync.Mutex
		var attempts []time.Time
		cfg := fast()
		cfg.Backoff = ExponentialBackoff(2*time.Second, time.Minute)
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

func TestNackAfterOverridesTheBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "later")
		var mu sync.Mutex
		var attempts []time.Time
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, time.Now())
			if len(attempts) == 1 {
				return NackAfter(errors.New("not yet"), 10*time.Second)
			}
			return nil
		}, fast())
		stop := start(t, c)
		time.Sleep(20 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(attempts) != 2 || attempts[1].Sub(attempts[0]) < 10*time.Second {
			t.Fatalf("attempts %v, want a retry 10 s later", attempts)
		}
	})
}

func TestPanicIsAFailureAndTheLoopGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
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

func TestRecoverMakesAPanicError(t *testing.T) {
	h := recoverPanics(quiet)(func(context.Context, *sqsloop.Message) error { panic(errors.New("inner")) })
	err := h(context.Background(), &sqsloop.Message{ID: "m"})
	var pe *PanicError
	if !errors.As(err, &pe) || len(pe.Stack) == 0 || pe.Unwrap() == nil {
		t.Fatalf("err = %v, want a *PanicError with a stack", err)
	}
}

func TestExponentialBackoff(t *testing.T) {
	f := ExponentialBackoff(time.Second, 10*time.Second)
	for count, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 50: 10 * time.Second} {
		if got := f(count); got != want {
			t.Errorf("f(%d) = %v, want %v", count, got, want)
		}
	}
}

func TestMiddlewareOrder(t *testing.T) {
	var trace []string
	mw := func(name string) Middleware {
		return func(next Handler) Handler {
			return func(ctx context.Context, m *sqsloop.Message) error {
				trace = append(trace, name)
				return next(ctx, m)
			}
		}
	}
	h := Chain(func(context.Context, *sqsloop.Message) error { trace = append(trace, "h"); return nil }, mw("a"), mw("b"))
	h(context.Background(), &sqsloop.Message{})
	if got := strings.Join(trace, ","); got != "a,b,h" {
		t.Fatalf("order %s, want a,b,h", got)
	}
}

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
		mb := &failingMailbox{Mailbox: newQueue(t, memmailbox.QueueConfig{}), err: errors.New("connection reset")}
		c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		stop := start(t, c)
		time.Sleep(60 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		// Doubling from 100 ms to 10 s with jitter: a few dozen tries a
		// minute, not a hot loop.
		if n := mb.calls.Load(); n < 5 || n > 60 {
			t.Fatalf("%d receives in 60 s of failures", n)
		}
	})
}

func TestClosedMailboxEndsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mb := &failingMailbox{Mailbox: newQueue(t, memmailbox.QueueConfig{}), err: fmt.Errorf("x: %w", sqsloop.ErrMailboxClosed)}
		c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		if err := c.Run(context.Background()); !errors.Is(err, sqsloop.ErrMailboxClosed) {
			t.Fatalf("Run = %v, want ErrMailboxClosed", err)
		}
	})
}

// Messages of one FIFO message group are handled in order, one at a time;
// groups run in parallel.
func TestFIFOGroupsKeepOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{FIFO: true, ContentBasedDeduplication: true})
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

func TestQueueWarnings(t *testing.T) {
	cfg := Config{VisibilityTimeout: 5 * time.Minute, ShutdownTimeout: 10 * time.Minute, Visibility: visibility.Config{Disabled: true}}.withDefaults()
	ws := queueWarnings(cfg, sqsloop.QueueAttributes{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 2})
	joined := strings.Join(ws, "\n")
	for _, want := range []string{"ShutdownTimeout", "maxReceiveCount"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q lack %s", joined, want)
		}
	}
	cfg = Config{}.withDefaults()
	ws = queueWarnings(cfg, sqsloop.QueueAttributes{VisibilityTimeout: 60 * time.Second})
	if len(ws) != 1 || !strings.Contains(ws[0], "Visibility.Interval") {
		t.Errorf("warnings %q, want one about Visibility.Interval", ws)
	}
	if ws := queueWarnings(cfg, sqsloop.QueueAttributes{VisibilityTimeout: 10 * time.Minute, MaxReceiveCount: 10}); len(ws) != 0 {
		t.Errorf("warnings for a fitting queue: %q", ws)
	}
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

// With room for several full batches, several receives are in flight at
// once (one per 10 handler slots), and handlers never exceed Concurrency.
func TestConcurrentReceivesFollowConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, bodies(2000)...)
		mb := &slowReceives{Mailbox: q}
		cfg := fast()
		cfg.Concurrency = 40
		var running, peak atomic.Int32
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(10 * time.Millisecond)
			running.Add(-1)
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(10 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mb.mu.Lock()
		defer mb.mu.Unlock()
		if mb.max != 4 {
			t.Fatalf("%d receives in flight at most, want 4 (40 slots / 10)", mb.max)
		}
		if p := peak.Load(); p > 40 {
			t.Fatalf("%d handlers at once, want ≤ 40", p)
		}
		if st := c.Stats(); st.Acked != 2000 {
			t.Fatalf("stats %+v: want all 2000 acked", st)
		}
	})
}
