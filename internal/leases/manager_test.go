package leases

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// The Manager as a whole: Run's life, Hold, Failed and Err.

func TestSecondRunIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := running(t, &recorder{}, visibility.Config{})
		synctest.Wait()
		if err := m.Run(t.Context()); !errors.Is(err, sqsloop.ErrAlreadyRunning) {
			t.Fatalf("second Run = %v, want ErrAlreadyRunning", err)
		}
	})
}

// A lease decided after its deadline passed, before the Manager's loop
// looked at it, is lost all the same: Err says so at once, and the loss is
// reported once when the loop runs.
func TestDecisionAfterTheDeadlineReportsTheLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lost lostLog
		cfg := fastConfig
		cfg.OnLeaseLost = lost.hook
		rec := &recorder{}
		m := newManager(t, rec, cfg)
		// No Run yet: nobody looks at the lease before its holder decides.
		l := m.Hold(message("d", 3*time.Second), heartbeat.New(), nil)
		time.Sleep(3 * time.Second)
		if err := l.Err(); !errors.Is(err, visibility.ErrLeaseLapsed) {
			t.Fatalf("Err = %v, want visibility.ErrLeaseLapsed", err)
		}
		l.Ack()
		stop := start(t, m)
		time.Sleep(time.Second)
		stop()
		if got, st := lost.get(), m.Stats(); len(got) != 1 || !errors.Is(got[0].Err, visibility.ErrLeaseLapsed) || st.LeasesLost != 1 {
			t.Fatalf("reported %+v, stats %+v: want the loss reported once", got, st)
		}
		if st := m.Stats(); st.LateAcked != 1 || st.Acked != 0 || len(rec.snapshot(opDelete)) != 1 {
			t.Fatalf("stats %+v: want one late ack", st)
		}
		if err := l.Err(); !errors.Is(err, visibility.ErrLeaseLapsed) {
			t.Fatalf("Err after the late ack = %v, want still visibility.ErrLeaseLapsed", err)
		}
	})
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitCalls advances virtual time until rec has recorded n calls of kind o,
// then until the Manager has applied them; it gives up after a minute.
func waitCalls(t *testing.T, rec *recorder, o op, n int) {
	t.Helper()
	for limit := time.Now().Add(time.Minute); len(rec.snapshot(o)) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(limit) {
			t.Fatalf("%d %v calls after a minute, want %d", len(rec.snapshot(o)), o, n)
		}
	}
	synctest.Wait()
}

var denied = fmt.Errorf("AccessDenied: not allowed: %w", sqsloop.ErrAccessDenied)

// visibility.MaxAccessDenied delete calls in a row denied: the Manager gives up.
func TestAccessDeniedDeletesCloseFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := failing(opDelete, denied)
		m := running(t, rec, fastConfig)
		m.Hold(message("a", 3*time.Second), heartbeat.New(), nil).Ack()
		waitCalls(t, rec, opDelete, visibility.MaxAccessDenied-1)
		if closed(m.Failed()) || m.Err() != nil {
			t.Fatalf("gave up after %d denied calls: %v", visibility.MaxAccessDenied-1, m.Err())
		}
		waitCalls(t, rec, opDelete, visibility.MaxAccessDenied)
		if !closed(m.Failed()) {
			t.Fatalf("Failed not closed after %d denied calls", visibility.MaxAccessDenied)
		}
		if err := m.Err(); !errors.Is(err, sqsloop.ErrAccessDenied) {
			t.Fatalf("Err = %v, want ErrAccessDenied", err)
		}
		if st := m.Stats(); st.Acked != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// A delete call that succeeds for any entry resets the count of denied
// calls.
func TestInterleavedSuccessResetsTheDeniedCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{reply: func(s *sent, n int) ([]error, error) {
			errs := make([]error, len(s.handles))
			switch {
			case s.op == opChange || n >= 2*visibility.MaxAccessDenied-1:
				return errs, nil
			case n == visibility.MaxAccessDenied-1: // a succeeds, b is denied
				for i, h := range s.handles {
					if h != "rh-a" {
						errs[i] = denied
					}
				}
				return errs, nil
			}
			return nil, denied
		}}
		m := running(t, rec, fastConfig)
		a := m.Hold(message("a", 3*time.Second), heartbeat.New(), nil)
		b := m.Hold(message("b", 3*time.Second), heartbeat.New(), nil)
		a.Ack()
		b.Ack()
		waitCalls(t, rec, opDelete, 2*visibility.MaxAccessDenied)
		if closed(m.Failed()) || m.Err() != nil {
			t.Fatalf("gave up: %v", m.Err())
		}
		if st := m.Stats(); st.Acked != 2 || st.Held != 0 {
			t.Fatalf("stats %+v: want both acked in the end", st)
		}
	})
}

// A queue that is gone, or a closed mailbox, ends the Manager's work at
// once.
func TestQueueNotFoundClosesFailedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{callErr: func(op) error { return fmt.Errorf("delete: %w", sqsloop.ErrQueueNotFound) }}
		m := running(t, rec, fastConfig)
		m.Hold(message("a", 3*time.Second), heartbeat.New(), nil).Ack()
		waitCalls(t, rec, opDelete, 1)
		if !closed(m.Failed()) || !errors.Is(m.Err(), sqsloop.ErrQueueNotFound) {
			t.Fatalf("Failed closed %v, Err %v: want closed with ErrQueueNotFound", closed(m.Failed()), m.Err())
		}
		if st := m.Stats(); st.AckFailed != 1 || st.Held != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// When Run's context ends, decided acks, nacks and give-backs go at once,
// not after their window, and Run returns when they are done.
func TestRunFlushesDecidedCallsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		cfg := fastConfig
		m := newManager(t, rec, cfg)
		stop := start(t, m)
		for i := range 3 {
			m.Hold(message(fmt.Sprint("a", i), 3*time.Second), nil, nil).Ack()
		}
		m.Hold(message("n", 3*time.Second), heartbeat.New(), nil).Nack(time.Minute)
		m.Hold(message("g", 3*time.Second), heartbeat.New(), nil).GiveBack()
		held := m.Hold(message("h", 3*time.Second), heartbeat.New(), nil)
		t0 := time.Now()
		stop()
		if d := time.Since(t0); d != 0 {
			t.Fatalf("Run took %v to flush, want no wait", d)
		}
		for _, c := range append(rec.snapshot(opDelete), rec.snapshot(opChange)...) {
			if !c.at.Equal(t0) {
				t.Fatalf("a call at %v, want at once", c.at.Sub(t0))
			}
		}
		if st := m.Stats(); st.Acked != 3 || st.Nacked != 1 || st.GivenBack != 1 || st.DeleteCalls != 1 || st.NackCalls != 1 || st.Held != 0 {
			t.Fatalf("stats %+v", st)
		}
		if n := len(rec.entriesFor(opChange, "rh-h")); n != 0 {
			t.Fatalf("a holding lease got %d calls at the flush, want none", n)
		}
		held.Ack() // after Run: ignored
		if n := len(rec.snapshot(opDelete)); n != 1 {
			t.Fatalf("%d delete calls, want 1", n)
		}
	})
}

// A mailbox that hangs cannot hold Run past flushTimeout: the calls on the
// wire are cancelled, those never sent are abandoned, and every unsent
// decision is counted failed.
func TestRunReturnsWithinFlushTimeoutWhenTheMailboxHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{hang: func(op) bool { return true }}
		m := newManager(t, rec, fastConfig)
		stop := start(t, m)
		const acks, nacks = (maxCalls + 1) * sqsloop.MaxBatchSize, 10 // more calls than may be on the wire
		for i := range acks {
			m.Hold(message(fmt.Sprint("a", i), 3*time.Second), nil, nil).Ack()
		}
		for i := range nacks {
			m.Hold(message(fmt.Sprint("n", i), 3*time.Second), nil, nil).Nack(0)
		}
		synctest.Wait()
		t0 := time.Now()
		stop()
		if d := time.Since(t0); d > flushTimeout {
			t.Fatalf("Run took %v to return, want ≤ %v", d, flushTimeout)
		}
		rec.mu.Lock()
		most := rec.maxOnWire
		rec.mu.Unlock()
		if most != maxCalls {
			t.Fatalf("at most %d calls on the wire at once, want %d", most, maxCalls)
		}
		if st := m.Stats(); st.AckFailed != acks || st.NackFailed != nacks || st.Acked != 0 || st.Held != 0 {
			t.Fatalf("stats %+v: want every decision counted failed", st)
		}
	})
}

// Stop bounds the flush with its context instead of the 1 s: with
// give-backs that hang, Run returns when Stop's 300 ms end, the give-backs
// counted failed, and Stop says its context ended first. With give-backs
// that answer, Stop returns nil as soon as they are sent. A Stop before
// Run returns at once, and Run then only flushes.
func TestStopBoundsTheFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{hang: func(op) bool { return true }}
		m := newManager(t, rec, fastConfig)
		ran := make(chan struct{})
		go func() { defer close(ran); _ = m.Run(t.Context()) }()
		for i := range 3 {
			m.Hold(message(fmt.Sprint("g", i), 3*time.Second), nil, nil).GiveBack()
		}
		synctest.Wait() // Run runs, the give-backs on the wire
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		if err := m.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop = %v, want DeadlineExceeded", err)
		}
		<-ran
		if d := time.Since(t0); d != 300*time.Millisecond {
			t.Errorf("Run returned %v after Stop, want 300ms (Stop's bound, not the 1 s)", d)
		}
		if st := m.Stats(); st.NackFailed != 3 || st.GivenBack != 0 {
			t.Errorf("stats %+v: want the 3 give-backs counted failed", st)
		}

		rec = &recorder{}
		m = newManager(t, rec, fastConfig)
		ran = make(chan struct{})
		go func() { defer close(ran); _ = m.Run(t.Context()) }()
		m.Hold(message("g", 3*time.Second), nil, nil).GiveBack()
		synctest.Wait()
		if err := m.Stop(t.Context()); err != nil {
			t.Errorf("Stop = %v, want nil", err)
		}
		<-ran
		if st := m.Stats(); st.GivenBack != 1 {
			t.Errorf("stats %+v: want the give-back sent", st)
		}

		rec = &recorder{}
		m = newManager(t, rec, fastConfig)
		m.Hold(message("e", 3*time.Second), heartbeat.New(), nil)
		if err := m.Stop(t.Context()); err != nil {
			t.Errorf("Stop before Run = %v, want nil", err)
		}
		t0 = time.Now()
		if err := m.Run(t.Context()); err != nil || time.Since(t0) != 0 || len(rec.snapshot(opChange)) != 0 {
			t.Errorf("Run after Stop: %v after %v, %d calls; want nil at once, nothing extended", err, time.Since(t0), len(rec.snapshot(opChange)))
		}
	})
}

// A failing ack near its deadline during the flush backs off: the flush
// extends nothing, so retrying at once would be a hot loop until the flush
// ends.
func TestFailingAckNearItsDeadlineBacksOffDuringTheFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := failing(opDelete, errors.New("throttled"))
		m := newManager(t, rec, fastConfig) // Interval 1 s, Extension 3 s
		stop := start(t, m)
		l := m.Hold(message("a", 3*time.Second), heartbeat.New(), nil)
		time.Sleep(2600 * time.Millisecond) // past deadline − Interval/2
		l.Ack()
		synctest.Wait()
		t0 := time.Now()
		stop()
		if d := time.Since(t0); d > flushTimeout {
			t.Fatalf("Run took %v to return, want ≤ %v", d, flushTimeout)
		}
		if n := len(rec.snapshot(opDelete)); n > 10 {
			t.Fatalf("%d delete calls in a flush of at most %v, want a back-off between them", n, flushTimeout)
		}
		if st := m.Stats(); st.Acked+st.LateAcked+st.AckFailed != 1 {
			t.Fatalf("stats %+v: want the ack retried until it ended, and counted once", st)
		}
	})
}

// Hold after Run has returned is ignored: the lease is never served and
// not counted.
func TestHoldAfterRunReturnedIsIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := newManager(t, rec, fastConfig)
		stop := start(t, m)
		stop()
		hb := heartbeat.New()
		l := m.Hold(message("late", 3*time.Second), hb, nil)
		hb.Beat()
		if st := m.Stats(); st.Held != 0 {
			t.Fatalf("stats %+v: want nothing held", st)
		}
		time.Sleep(2 * time.Second)
		l.Ack()
		time.Sleep(time.Second)
		if n := len(rec.snapshot(opChange)) + len(rec.snapshot(opDelete)); n != 0 {
			t.Fatalf("%d calls, want none", n)
		}
		if err := m.Run(t.Context()); !errors.Is(err, sqsloop.ErrAlreadyRunning) {
			t.Fatalf("Run after Run = %v, want ErrAlreadyRunning", err)
		}
	})
}

// Err wraps ErrAccessDenied when the calls were denied, even if another
// entry of the same calls failed otherwise.
func TestErrWrapsTheDenialNotAnotherEntrysError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{entry: func(o op, h string) error {
			switch {
			case o != opDelete:
				return nil
			case h == "rh-a":
				return errors.New("InternalError")
			}
			return denied
		}}
		m := running(t, rec, fastConfig)
		a := m.Hold(message("a", 3*time.Second), heartbeat.New(), nil)
		b := m.Hold(message("b", 3*time.Second), heartbeat.New(), nil)
		a.Ack()
		b.Ack()
		waitCalls(t, rec, opDelete, visibility.MaxAccessDenied)
		if !closed(m.Failed()) {
			t.Fatal("Failed not closed")
		}
		if err := m.Err(); !errors.Is(err, sqsloop.ErrAccessDenied) {
			t.Fatalf("Err = %v, want ErrAccessDenied", err)
		}
	})
}

// A lease found lost by an answer that comes after the flush, while Run
// waits for its calls, is reported like any other.
func TestLossAnsweredAfterTheFlushIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		rec := &recorder{gate: gate, entry: func(op, string) error {
			return fmt.Errorf("entry: %w", sqsloop.ErrReceiptHandleExpired)
		}}
		var lost lostLog
		cfg := fastConfig
		cfg.OnLeaseLost = lost.hook
		m := newManager(t, rec, cfg)
		stop := start(t, m)
		hb := heartbeat.New()
		m.Hold(message("x", 3*time.Second), hb, nil)
		hb.Beat()
		time.Sleep(1200 * time.Millisecond) // the extension sent at 1 s waits on the gate
		time.AfterFunc(1300*time.Millisecond, func() { close(gate) })
		stop() // the flush ends at 2.2 s; the answer comes at 2.5 s
		if got := lost.get(); len(got) != 1 || !errors.Is(got[0].Err, sqsloop.ErrReceiptHandleExpired) {
			t.Fatalf("OnLeaseLost got %+v, want the stale handle reported", got)
		}
		if st := m.Stats(); st.LeasesLost != 1 {
			t.Fatalf("stats %+v: want 1 lost", st)
		}
	})
}

// logRecords collects the records logged through it; each, if set, is
// called for every record first.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
	each func()
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	if h.each != nil {
		h.each()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecords) WithGroup(string) slog.Handler      { return h }

// find returns the attributes of the first record whose message contains
// msg, and whether there was one.
func (h *logRecords) find(msg string) (map[string]slog.Value, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if strings.Contains(r.Message, msg) {
			attrs := map[string]slog.Value{}
			r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value; return true })
			return attrs, true
		}
	}
	return nil, false
}

// When Run returns, the leases still holding are no longer served: the
// warning counts them, nothing is held any more, and each lapses at its
// deadline (Err says so).
func TestRunEndAbandonsHoldingLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logRecords{}
		m, err := New(&recorder{}, fastConfig, slog.New(logs))
		if err != nil {
			t.Fatal(err)
		}
		stop := start(t, m)
		a := m.Hold(message("a", 30*time.Second), heartbeat.New(), nil)
		m.Hold(message("b", 30*time.Second), heartbeat.New(), nil)
		m.Hold(message("lapsed", time.Second), heartbeat.New(), nil) // lost, its holder never decides
		time.Sleep(2 * time.Second)
		stop()
		attrs, ok := logs.find("still held")
		if !ok || attrs["leases"].String() != "2" {
			t.Fatalf("warning %v (found %v), want leases=2", attrs, ok)
		}
		if st := m.Stats(); st.Held != 0 || st.LeasesLost != 1 {
			t.Fatalf("stats %+v: want nothing held after Run, 1 lost", st)
		}
		if err := a.Err(); err != nil {
			t.Fatalf("Err = %v before the deadline", err)
		}
		time.Sleep(30 * time.Second)
		if err := a.Err(); !errors.Is(err, visibility.ErrLeaseLapsed) {
			t.Fatalf("Err = %v after the deadline of an abandoned lease, want visibility.ErrLeaseLapsed", err)
		}
	})
}

// Run called with its context already done extends nothing: it only
// flushes the decided calls, and returns.
func TestRunWithADoneContextOnlyFlushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := newManager(t, rec, fastConfig)
		hb := heartbeat.New()
		m.Hold(message("h", 3*time.Second), hb, nil)
		m.Hold(message("a", 3*time.Second), heartbeat.New(), nil).Ack()
		hb.Beat()
		time.Sleep(1500 * time.Millisecond) // h is due, and alive
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := m.Run(ctx); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if n := len(rec.snapshot(opChange)); n != 0 {
			t.Fatalf("%d extension calls after the context was done, want 0", n)
		}
		if st := m.Stats(); st.Acked != 1 {
			t.Fatalf("stats %+v: want the decided ack flushed", st)
		}
	})
}

// Time spent in OnLeaseLost is not added again to the wait for the next
// look: the loop looks at a lease due meanwhile as soon as the hook
// returns.
func TestSlowLossHookDoesNotDelayTheNextLookTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		cfg := fastConfig
		cfg.OnLeaseLost = func(*sqsloop.Message, error) { time.Sleep(400 * time.Millisecond) }
		m := running(t, rec, cfg)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		t0 := time.Now()
		m.Hold(message("silent", 2*time.Second), heartbeat.New(), nil) // lost at 2 s
		time.Sleep(100 * time.Millisecond)
		hb := heartbeat.New()
		m.Hold(message("b", 3*time.Second), hb, nil) // looked at 1.1 s, 2.1 s, …
		go beatEvery(ctx, hb, 100*time.Millisecond)
		time.Sleep(3 * time.Second)
		var at []time.Duration
		for _, e := range rec.entriesFor(opChange, "rh-b") {
			at = append(at, e.at.Sub(t0))
		}
		if len(at) < 2 || at[1] != 2400*time.Millisecond {
			t.Fatalf("b extended at %v, want its second look right after the hook returned (2.4s)", at)
		}
	})
}

// Failed calls are logged, with the message's ID, by Run's goroutine
// without the Manager's mutex: a slow log does not hold up Hold, Start and
// the decisions, which take it.
func TestFailedCallsAreLoggedOutsideTheMutex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m *Manager
		underMutex := 0 // records logged while m.mu was held
		logs := &logRecords{each: func() {
			if !m.mu.TryLock() {
				underMutex++
				return
			}
			m.mu.Unlock()
		}}
		rec := &recorder{entry: func(o op, h string) error {
			switch h {
			case "rh-e":
				return errors.New("throttled")
			case "rh-a":
				return fmt.Errorf("entry: %w", sqsloop.ErrReceiptHandleExpired)
			case "rh-n":
				return fmt.Errorf("entry: %w", sqsloop.ErrInvalidArgument)
			}
			return nil
		}}
		m, err := New(rec, fastConfig, slog.New(logs))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(start(t, m))
		hb := heartbeat.New()
		e := m.Hold(message("e", 3*time.Second), hb, nil)
		hb.Beat()
		m.Hold(message("a", 3*time.Second), heartbeat.New(), nil).Ack()
		m.Hold(message("n", 3*time.Second), heartbeat.New(), nil).Nack(0)
		time.Sleep(1500 * time.Millisecond) // e's extension failed at 1 s
		for msg, id := range map[string]string{"extension failed": "e", "visibility: ack failed": "a", "nack failed": "n"} {
			if attrs, ok := logs.find(msg); !ok || attrs["message_id"].String() != id {
				t.Errorf("%q logged %v (found %v), want message_id=%s", msg, attrs, ok, id)
			}
		}
		if underMutex != 0 {
			t.Fatalf("%d records logged while the Manager's mutex was held, want 0", underMutex)
		}
		e.Ack()
	})
}
