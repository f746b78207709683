package integration

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/visibility"
)

// Timings of the drain scenarios.
const (
	// drainBudget is the consumer's ShutdownTimeout.
	drainBudget = 3 * time.Second
	// drainGrace is the most a drain may take past its budget here, in
	// virtual time: consumer.DrainGrace (500 ms) for cancelled handlers to
	// return before their messages are given back, and the give-back.
	drainGrace = time.Second
	// stubbornFor is how long a stubborn handler ignores its context.
	stubbornFor = 60 * time.Second
	// runBound bounds the wait for Run after its context was cancelled,
	// so that a test on the bug's path ends (the stubborn handler is then
	// released): well past drainBudget + drainGrace.
	runBound = 10 * time.Second
)

// stubbornHandler beats for 2 s, then ignores its context: it waits
// stubbornFor on a timer (virtual under synctest), or until release is
// closed, and returns nil. ignoring is closed when it starts ignoring,
// returned when it has returned.
type stubbornHandler struct {
	h        mailboxtest.Harness
	release  chan struct{}
	ignoring chan struct{}
	returned chan struct{}
	onceIgn  sync.Once
	onceRet  sync.Once
	onceRel  sync.Once
}

func newStubbornHandler(h mailboxtest.Harness) *stubbornHandler {
	return &stubbornHandler{h: h, release: make(chan struct{}), ignoring: make(chan struct{}), returned: make(chan struct{})}
}

func (s *stubbornHandler) handle(ctx context.Context, m *sqsloop.Message) error {
	defer s.onceRet.Do(func() { close(s.returned) })
	if err := beat(ctx, s.h, 2*time.Second, 250*time.Millisecond); err != nil {
		return err
	}
	s.onceIgn.Do(func() { close(s.ignoring) })
	timer := time.NewTimer(stubbornFor)
	defer timer.Stop()
	select { // ctx is ignored on purpose
	case <-timer.C:
	case <-s.release:
	}
	return nil
}

// let makes the handler return now.
func (s *stubbornHandler) let() { s.onceRel.Do(func() { close(s.release) }) }

// stubbornConfig: one handler, 10 s leases looked at every 2 s (so a
// message not given back stays hidden for seconds after the drain), 1 s
// polls, a drainBudget drain.
func stubbornConfig() consumer.Config {
	cfg := e2eConfig()
	cfg.Concurrency = 1
	cfg.VisibilityTimeout = 10 * time.Second
	cfg.Visibility = visibility.Config{Interval: 2 * time.Second, Extension: 10 * time.Second}
	cfg.ShutdownTimeout = drainBudget
	return cfg
}

// Run ends on time even when a handler ignores its context: when the drain
// budget (ShutdownTimeout 3 s) runs out, the handler's context is
// cancelled; after consumer.DrainGrace (500 ms) its message is given back
// (visible at once, no more extensions) and Run returns an error wrapping
// consumer.ErrDrainTimeout that counts the abandoned handlers. When the
// abandoned handler finally returns nil, its message is not deleted: a
// second receiver gets it. In virtual time (memmailbox, sqlmailbox/sqlite)
// Run must return within 3 s + 1 s of the cancel.
//
// Guards the bug where Run returned 59.4 s after cancel with ShutdownTimeout
// 3 s, and the message was acked when the handler finally returned nil.
func TestE2EDrainAbandonsHandlerThatIgnoresContext(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: 10 * time.Second})
		defer cleanup()
		ids := mailboxtest.SendBodies(ctx, t, q.Mailbox, "stubborn job")

		sh := newStubbornHandler(h)
		defer sh.let()
		cfg := stubbornConfig()
		c, err := consumer.New(q.Mailbox, sh.handle, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cancel, runDone := startRun(t, c)
		if !awaitClosed(sh.ignoring, patience) {
			t.Fatalf("%s: the handler did not start within %v", h.Name(), patience)
		}
		if err := h.Sleep(ctx, time.Second); err != nil {
			t.Fatal(err)
		}

		cancel()
		cancelled := time.Now()
		runErr, ok := awaitErr(runDone, runBound)
		elapsed := time.Since(cancelled)
		if !ok {
			t.Errorf("%s: Run still running %v after its context was cancelled (ShutdownTimeout %v); releasing the handler",
				h.Name(), runBound, drainBudget)
			sh.let()
			runErr = <-runDone
			elapsed = time.Since(cancelled)
		}
		t.Logf("%s: Run returned %v after the cancel: %v", h.Name(), elapsed.Round(time.Millisecond), runErr)
		if h.Features().VirtualTime && elapsed > drainBudget+drainGrace {
			t.Errorf("%s: Run returned %v after the cancel, want at most %v (ShutdownTimeout) + %v (grace)",
				h.Name(), elapsed, drainBudget, drainGrace)
		}
		if !errors.Is(runErr, consumer.ErrDrainTimeout) {
			t.Errorf("%s: Run returned %v, want an error wrapping consumer.ErrDrainTimeout", h.Name(), runErr)
		}
		if c.Ready() == nil {
			t.Errorf("%s: Ready() is nil after Run returned", h.Name())
		}

		// The abandoned handler returns nil now: that must not ack.
		sh.let()
		if !awaitClosed(sh.returned, patience) {
			t.Fatalf("%s: the released handler did not return", h.Name())
		}
		if err := h.Sleep(ctx, 500*time.Millisecond); err != nil { // an ack would go out within the ack window
			t.Fatal(err)
		}
		// Given back, the message is visible at once; not given back, it
		// would stay hidden until its last extension + 10 s.
		msgs, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease, WaitTime: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: a second receiver got %s %v after the cancel; stats %+v", h.Name(), describe(msgs), time.Since(cancelled).Round(time.Millisecond), c.Stats())
		if len(msgs) != 1 || msgs[0].ID != ids[0] {
			t.Errorf("%s: a second receiver got %s within 2 s, want the abandoned message back (not deleted, not left hidden)", h.Name(), describe(msgs))
		} else {
			mailboxtest.AckAll(ctx, t, q.Mailbox, msgs...)
		}
	})
}

// A lifecycle.LoopGroup running a consumer whose handler ignores its
// context still stops on time: the group's Run returns within the
// consumer's ShutdownTimeout (3 s) + 1 s of its context's cancel, and
// reports the consumer's consumer.ErrDrainTimeout. In virtual time only
// (memmailbox and sqlmailbox/sqlite: exact); the server and PostgreSQL are
// covered by TestE2EDrainAbandonsHandlerThatIgnoresContext.
//
// Guards the bug where a deploy waited for a stuck handler: the group waits
// for every loop's Run, and the consumer's Run waited for the handler.
func TestE2ELoopGroupStopsOnTimeWithStubbornHandler(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		if !h.Features().VirtualTime {
			t.Skipf("%s: on time is asserted in virtual time only", h.Name())
		}
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: 10 * time.Second})
		defer cleanup()
		mailboxtest.SendBodies(ctx, t, q.Mailbox, "stubborn job")

		sh := newStubbornHandler(h)
		defer sh.let()
		c, err := consumer.New(q.Mailbox, sh.handle, stubbornConfig())
		if err != nil {
			t.Fatal(err)
		}
		// No signal handling: os/signal cannot be used inside a synctest
		// bubble, and the test cancels the context instead.
		g := &lifecycle.LoopGroup{Signals: []os.Signal{}}
		if err := g.Add("consumer", c); err != nil {
			t.Fatal(err)
		}
		gctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		groupDone := make(chan error, 1)
		go func() { groupDone <- g.Run(gctx) }()
		if !awaitClosed(sh.ignoring, patience) {
			t.Fatalf("%s: the handler did not start within %v", h.Name(), patience)
		}

		cancel()
		cancelled := time.Now()
		groupErr, ok := awaitErr(groupDone, runBound+10*time.Second)
		elapsed := time.Since(cancelled)
		if !ok {
			t.Errorf("%s: the group still running %v after its context was cancelled; releasing the handler", h.Name(), elapsed)
			sh.let()
			groupErr = <-groupDone
			elapsed = time.Since(cancelled)
		}
		t.Logf("%s: LoopGroup.Run returned %v after the cancel: %v", h.Name(), elapsed, groupErr)
		if elapsed > drainBudget+drainGrace {
			t.Errorf("%s: LoopGroup.Run returned %v after the cancel, want at most %v (consumer ShutdownTimeout) + %v",
				h.Name(), elapsed, drainBudget, drainGrace)
		}
		if !errors.Is(groupErr, consumer.ErrDrainTimeout) {
			t.Errorf("%s: LoopGroup.Run returned %v, want the consumer's consumer.ErrDrainTimeout", h.Name(), groupErr)
		}
	})
}

// hangingAttributes is a mailbox whose QueueAttributes (the consumer's
// start-up check) hangs until its ctx is done. entered is closed when the
// check has begun.
type hangingAttributes struct {
	sqsloop.Mailbox
	entered chan struct{}
	once    sync.Once
}

func (m *hangingAttributes) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	m.once.Do(func() { close(m.entered) })
	<-ctx.Done()
	return sqsloop.QueueAttributes{}, ctx.Err()
}

var _ sqsloop.AttributesReader = (*hangingAttributes)(nil)

// A shutdown asked for while the start-up queue check hangs ends Run within
// the receive grace (virtual time), not after the check's own 10 s
// timeout: both by cancelling Run's context and by calling Shutdown. In
// virtual time only (memmailbox and sqlmailbox/sqlite): the hang is the
// wrapper's, so the wire adds nothing.
//
// Guards the bug where Run checked the queue with a timeout of its own and
// took no notice of a drain asked for meanwhile.
func TestE2EShutdownDuringQueueCheckIsImmediate(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"cancel", "Shutdown"} {
		t.Run(how, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
				if !h.Features().VirtualTime {
					t.Skipf("%s: \"at once\" is asserted in virtual time only, and the hang is the wrapper's", h.Name())
				}
				ctx := t.Context()
				q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{})
				defer cleanup()
				mb := &hangingAttributes{Mailbox: q.Mailbox, entered: make(chan struct{})}
				c, err := consumer.New(mb, func(context.Context, *sqsloop.Message) error { return nil }, e2eConfig())
				if err != nil {
					t.Fatal(err)
				}
				cancel, runDone := startRun(t, c)
				if !awaitClosed(mb.entered, patience) {
					t.Fatalf("%s: Run did not check the queue", h.Name())
				}
				asked := time.Now()
				shutdownDone := make(chan error, 1)
				if how == "cancel" {
					cancel()
					shutdownDone <- nil
				} else {
					go func() { shutdownDone <- c.Shutdown(context.Background()) }()
				}
				runErr, ok := awaitErr(runDone, 30*time.Second)
				elapsed := time.Since(asked)
				if !ok {
					t.Fatalf("%s: Run still running %v after the %s", h.Name(), elapsed, how)
				}
				t.Logf("%s: Run returned %v after the %s during the queue check: %v", h.Name(), elapsed, how, runErr)
				if runErr != nil {
					t.Errorf("%s: Run: %v", h.Name(), runErr)
				}
				if err := <-shutdownDone; err != nil {
					t.Errorf("%s: Shutdown: %v", h.Name(), err)
				}
				if elapsed >= time.Second {
					t.Errorf("%s: Run returned %v after the %s, want within the receive grace (the check's own timeout is 10 s)", h.Name(), elapsed, how)
				}
			})
		})
	}
}
