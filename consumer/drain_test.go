package consumer

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// hangingMailbox: extension calls (Timeout > 0) hang until release closes.
type hangingMailbox struct {
	sqsloop.Mailbox
	release chan struct{}
}

func (h *hangingMailbox) ChangeVisibility(ctx context.Context, ch []sqsloop.VisibilityChange) ([]error, error) {
	if ch[0].Timeout > 0 {
		select { // a black-holed connection: the SDK has no overall timeout
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.Mailbox.ChangeVisibility(ctx, ch)
}

func TestHungExtensionDoesNotHoldRunPastTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "a")
		mb := &hangingMailbox{Mailbox: q, release: make(chan struct{})}
		cfg := fast()
		cfg.ShutdownTimeout = 5 * time.Second
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			heartbeat.Beat(ctx)
			time.Sleep(1500 * time.Millisecond) // the extension at 1 s is in flight
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(2 * time.Second)
		ret := make(chan error, 1)
		go func() { ret <- stop() }()
		select {
		case <-ret:
		case <-time.After(time.Hour):
			t.Errorf("Run has not returned 1h (virtual) after shutdown; ShutdownTimeout is 5s. Stats %+v", c.Stats())
			close(mb.release)
			<-ret
		}
	})
}

func TestShutdownWithADoneContextStillGivesBackUnstarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(20)...)
		mb := &lateMailbox{Mailbox: q, release: make(chan struct{})}
		cfg := fast()
		cfg.Concurrency = 20
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			return beatFor(ctx, 10*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
		}, cfg)
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_ = c.Shutdown(done) // e.g. a LoopGroup whose shutdown deadline already passed
		<-runErr
		// 10 unstarted, and 10 in flight interrupted by the done context.
		if st := c.Stats(); st.GivenBack != 20 || st.Started != 10 {
			t.Errorf("stats %+v: want the 10 unstarted and the 10 interrupted given back", st)
		}
		if qs := q.Stats(); qs.Visible != 20 {
			t.Errorf("queue %+v: want all 20 visible again", qs)
		}
	})
}

// Shutdown gives back the FIFO messages waiting behind a running one of
// their group as soon as the receives in flight are back (within
// maxReceiveGrace), and receiving stops as soon as it begins.
func TestShutdownGivesBackWaitingFIFOMessagesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, ContentBasedDeduplication: true})
		var out []sqsloop.OutgoingMessage
		for i := range 4 {
			out = append(out, sqsloop.OutgoingMessage{Body: string(rune('a' + i)), MessageGroupID: "g"})
		}
		if _, err := q.Send(t.Context(), out); err != nil {
			t.Fatal(err)
		}
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			return beatFor(ctx, 5*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
		}, fast())
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		if st := q.Stats(); st.InFlight != 4 {
			t.Fatalf("queue %+v: want the group's 4 messages received", st)
		}
		shutdown := make(chan error, 1)
		go func() { shutdown <- c.Shutdown(context.Background()) }()
		synctest.Wait()
		if running(c) {
			t.Fatal("still receiving once shutdown began")
		}
		// Given back once the receives in flight have come back: within
		// their grace.
		time.Sleep(maxReceiveGrace)
		synctest.Wait()
		if st := q.Stats(); st.InFlight != 1 || st.Returned != 3 {
			t.Fatalf("queue %+v: want the 3 waiting messages given back within the receives' grace", st)
		}
		if err := <-shutdown; err != nil {
			t.Fatal(err)
		}
		<-runErr
		if st := c.Stats(); st.Acked != 1 || st.Started != 1 || st.GivenBack != 3 {
			t.Fatalf("stats %+v: want the running one acked, 3 given back", st)
		}
	})
}

// A handler that ignores its cancelled context cannot hold Run past the
// drain budget: after ShutdownTimeout and DrainGrace its message is given
// back, Run returns an error wrapping ErrDrainTimeout that counts it as
// abandoned, and what the handler returns later acks nothing.
func TestRunEndsOnTimeWhenAHandlerIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "stubborn")
		cfg := fast()
		cfg.ShutdownTimeout = 3 * time.Second
		returned := make(chan struct{})
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			defer close(returned)
			for range 60 { // works on for a minute, beating, ignoring ctx
				heartbeat.Beat(ctx)
				time.Sleep(time.Second)
			}
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(time.Second)
		began := time.Now()
		err := stop()
		took := time.Since(began)
		if !errors.Is(err, ErrDrainTimeout) || !strings.Contains(err.Error(), "1 of them abandoned") {
			t.Fatalf("Run = %v, want ErrDrainTimeout with 1 abandoned", err)
		}
		if want := 3*time.Second + DrainGrace; took != want {
			t.Fatalf("Run returned %v after cancel, want %v (budget + grace)", took, want)
		}
		if qs := q.Stats(); qs.Visible != 1 || qs.InFlight != 0 {
			t.Fatalf("queue %+v: want the abandoned message visible again when Run returns", qs)
		}
		if st := c.Stats(); st.Abandoned != 1 || st.GivenBack != 1 {
			t.Fatalf("stats %+v: want 1 abandoned, 1 given back", st)
		}
		<-returned // the handler returns nil 60 s in
		synctest.Wait()
		if qs := q.Stats(); qs.Deleted != 0 || qs.Visible != 1 {
			t.Fatalf("queue %+v: the late nil of an abandoned handler must not ack", qs)
		}
		if st := c.Stats(); st.Acked != 0 || st.Extensions > 4 {
			t.Fatalf("stats %+v: want no ack, and no extension after the give-back", st)
		}
	})
}

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

// Shutdown with 10 received-but-unstarted messages makes all 10 visible
// again at once, lets the in-flight ones finish and ack, and Run returns.
func TestShutdownGivesBackUnstartedAndFinishesInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
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
		if !running(c) {
			t.Fatal("not receiving while it should")
		}

		shutdownErr := make(chan error, 1)
		go func() { shutdownErr <- c.Shutdown(context.Background()) }()
		synctest.Wait() // no virtual time passes
		if running(c) {
			t.Fatal("still receiving during the drain")
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
		q := newQueue(t, sqsloop.QueueSpec{})
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
		q := newQueue(t, sqsloop.QueueSpec{})
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

// The drain is logged at INFO when it begins and when it ends, with what it
// did: messages given back, handlers that finished, handlers abandoned.
func TestDrainIsLoggedWithItsCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(20)...)
		mb := &lateMailbox{Mailbox: q, release: make(chan struct{})}
		var logs bytes.Buffer // the handler serialises its writes
		cfg := fast()
		cfg.Concurrency = 20
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			return beatFor(ctx, 3*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
		}, cfg)
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		shutdownErr := make(chan error, 1)
		go func() { shutdownErr <- c.Shutdown(context.Background()) }()
		synctest.Wait()
		close(mb.release) // 10 unstarted come back and are given back
		if err := <-shutdownErr; err != nil {
			t.Fatal(err)
		}
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
		out := logs.String()
		for _, want := range []string{
			`level=INFO msg="consumer: drain began; receiving stopped" in_flight=10`,
			`level=INFO msg="consumer: drain ended" given_back=10 finished=10 abandoned=0 acks_unsent=0 took=2s`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("log lacks %q:\n%s", want, out)
			}
		}
	})
}

// openReceives is a mailbox whose Receive waits a round trip before it
// takes messages, as a long poll takes what arrives while it waits, and
// which counts the give-backs (ChangeVisibility to 0) made while a Receive
// is open: a message given back then may be taken by that very Receive,
// one more receive count towards the queue's maxReceiveCount for nothing.
type openReceives struct {
	sqsloop.Mailbox
	rtt time.Duration

	mu                            sync.Mutex
	hold                          chan struct{} // when set, Receive waits for it to close before it takes messages
	open                          int           // Receive calls that have not taken their messages
	givenBack, givenBackWhileOpen int
}

func (o *openReceives) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	o.mu.Lock()
	o.open++
	hold := o.hold
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.open--
		o.mu.Unlock()
	}()
	select {
	case <-time.After(o.rtt):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return o.Mailbox.Receive(ctx, req)
}

func (o *openReceives) ChangeVisibility(ctx context.Context, ch []sqsloop.VisibilityChange) ([]error, error) {
	o.mu.Lock()
	for _, c := range ch {
		if c.Timeout == 0 {
			o.givenBack++
			if o.open > 0 {
				o.givenBackWhileOpen++
			}
		}
	}
	o.mu.Unlock()
	return o.Mailbox.ChangeVisibility(ctx, ch)
}

// The drain gives nothing back while a receive is open, not even a
// sequence that a handler freed during the receives' grace takes from the
// receive-ahead buffer. Fast handlers and a 50 ms round trip open the
// receive-ahead; the receives on the wire are held and then come back at
// once, which fills the buffer; as the handlers free up, a receive goes
// out; the drain begins while it is open, and handlers free up during its
// grace.
func TestNothingIsGivenBackWhileAReceiveIsOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(500)...)
		mb := &openReceives{Mailbox: q, rtt: 50 * time.Millisecond}
		cfg := fast()
		cfg.Concurrency = 2
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			time.Sleep(10 * time.Millisecond)
			return nil
		}, cfg)
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		hold := make(chan struct{})
		mb.mu.Lock()
		mb.hold = hold
		mb.mu.Unlock()
		time.Sleep(200 * time.Millisecond) // the handlers finish, every receive waits
		mb.mu.Lock()
		mb.hold = nil
		mb.mu.Unlock()
		close(hold) // they come back at once
		time.Sleep(25 * time.Millisecond)
		mb.mu.Lock()
		open := mb.open
		mb.mu.Unlock()
		if ahead, queued := c.intake.depth(), c.Stats().Received-c.Stats().Started; open == 0 || queued < 4 || ahead == 0 {
			t.Fatalf("%d receives open, %d messages waiting for a handler, receive-ahead %d: the test shows nothing", open, queued, ahead)
		}
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
		mb.mu.Lock()
		givenBack, whileOpen := mb.givenBack, mb.givenBackWhileOpen
		mb.mu.Unlock()
		if givenBack == 0 || whileOpen != 0 {
			t.Errorf("%d messages given back, %d of them while a receive was open; want some, none while open", givenBack, whileOpen)
		}
		if qs := q.Stats(); qs.InFlight != 0 || qs.Deleted+qs.Visible != 500 {
			t.Errorf("queue %+v: want every message deleted or visible again", qs)
		}
	})
}

// A Shutdown context that ends before ShutdownTimeout spends the drain
// budget then: the WARN line, the handlers' contexts cancelled, and after
// DrainGrace the give-back of what a handler ignoring its context holds,
// and Run's return; not at ShutdownTimeout.
func TestShutdownContextEndsTheDrainBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "stubborn")
		var logs bytes.Buffer
		cfg := fast()
		cfg.ShutdownTimeout = 30 * time.Second
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		returned := make(chan struct{})
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			defer close(returned)
			for range 60 { // works on for a minute, beating, ignoring ctx
				heartbeat.Beat(ctx)
				time.Sleep(time.Second)
			}
			return nil
		}, cfg)
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		began := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := c.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want its context's error", err)
		}
		err := <-runErr
		if took, want := time.Since(began), 2*time.Second+DrainGrace; took != want {
			t.Errorf("Run returned %v after Shutdown, want %v (its context, then DrainGrace)", took, want)
		}
		if !errors.Is(err, ErrDrainTimeout) || !strings.Contains(err.Error(), "after Shutdown's context ended, 1 of them abandoned") {
			t.Errorf("Run = %v, want ErrDrainTimeout, 1 abandoned after Shutdown's context ended", err)
		}
		if !strings.Contains(logs.String(), `level=WARN msg="consumer: drain budget exhausted; cancelling in-flight handlers"`) {
			t.Errorf("no WARN line about the budget:\n%s", logs.String())
		}
		if qs, st := q.Stats(), c.Stats(); qs.Visible != 1 || st.Abandoned != 1 {
			t.Errorf("queue %+v, stats %+v: want the abandoned message visible again", qs, st)
		}
		<-returned
	})
}
