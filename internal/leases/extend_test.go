package leases

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
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// Extension: alive leases are extended before their deadlines, in batch
// calls of at most 10 entries, and silent ones lapse.

func TestBeatingLeaseIsExtendedBeforeItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, fastConfig)

		ctx, cancel := context.WithCancel(t.Context())
		hb := heartbeat.New()
		msg := message("a", 3*time.Second)
		l := m.Hold(msg, hb, nil)
		go beatEvery(ctx, hb, time.Second)

		time.Sleep(60 * time.Second)
		cancel()
		if err := l.Err(); err != nil {
			t.Fatalf("lease lost: %v", err)
		}
		l.Ack()
		// Every extension must land before the deadline it extends.
		deadline := msg.ReceivedAt.Add(3 * time.Second)
		exts := rec.entriesFor(opChange, "rh-a")
		for _, e := range exts {
			if !e.at.Before(deadline) {
				t.Fatalf("extension at %v, after the deadline %v", e.at, deadline)
			}
			if e.timeout != 3*time.Second {
				t.Fatalf("extension asked for %v, want 3s", e.timeout)
			}
			deadline = e.at.Add(3 * time.Second)
		}
		// At most one extension per Interval over 60 s.
		if n := len(exts); n < 20 || n > 60 {
			t.Fatalf("%d extensions in 60 s, want 20–60", n)
		}
	})
}

func TestSilentLeaseLapsesAndIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lostLog
		cfg := fastConfig
		cfg.CancelOnLeaseLost = true
		cfg.OnLeaseLost = lost.hook
		m := running(t, rec, cfg)

		hb := heartbeat.New()
		ctx, cancel := context.WithCancelCause(t.Context())
		l := m.Hold(message("s", 3*time.Second), hb, cancel)
		hb.Beat()
		time.Sleep(2500 * time.Millisecond) // one extension earned by that beat
		if n := len(rec.entriesFor(opChange, "rh-s")); n != 1 {
			t.Fatalf("%d extensions after one beat, want 1", n)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if n := len(rec.entriesFor(opChange, "rh-s")); n != 1 {
			t.Fatalf("%d extensions without beats, want still 1", n)
		}
		if got := lost.get(); len(got) != 1 || !errors.Is(got[0].Err, visibility.ErrLeaseLapsed) || !errors.Is(got[0].Err, visibility.ErrLeaseLost) {
			t.Fatalf("OnLeaseLost got %+v, want one visibility.ErrLeaseLapsed", got)
		}
		if cause := context.Cause(ctx); !errors.Is(cause, visibility.ErrLeaseLost) || !errors.Is(cause, visibility.ErrLeaseLapsed) {
			t.Fatalf("handler context cause = %v, want visibility.ErrLeaseLost and visibility.ErrLeaseLapsed", cause)
		}
		if err := l.Err(); !errors.Is(err, visibility.ErrLeaseLapsed) {
			t.Fatalf("Err = %v, want visibility.ErrLeaseLapsed", err)
		}
		if st := m.Stats(); st.LeasesLost != 1 || st.Held != 1 {
			t.Fatalf("stats %+v: want 1 lost, still held until its holder decides", st)
		}
	})
}

func TestHundredLeasesTakeAtMostTenCallsPerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, fastConfig)

		ctx, cancel := context.WithCancel(t.Context())
		var leases []*Lease
		// Received in waves of 10 spread over the first 3 s, as a consumer
		// with 100 handler slots would.
		for i := range 100 {
			if i%10 == 0 && i > 0 {
				time.Sleep(300 * time.Millisecond)
			}
			hb := heartbeat.New()
			leases = append(leases, m.Hold(message(fmt.Sprint(i), 3*time.Second), hb, nil))
			go beatEvery(ctx, hb, time.Second)
		}
		time.Sleep(30 * time.Second)
		cancel()
		for _, l := range leases {
			if err := l.Err(); err != nil {
				t.Fatalf("lease lost: %v", err)
			}
		}
		perSecond := map[int64]int{}
		for _, c := range rec.snapshot(opChange) {
			perSecond[c.at.Unix()]++
			if len(c.handles) > sqsloop.MaxBatchSize {
				t.Fatalf("a call carried %d entries", len(c.handles))
			}
		}
		for sec, n := range perSecond {
			if n > 10 {
				t.Fatalf("%d calls in the interval starting at %d, want ≤ 10", n, sec)
			}
		}
		if st := m.Stats(); st.ExtensionCalls*10 < st.Extensions || st.Extensions < 100*9 || st.LargestExtensionBatch != 10 {
			t.Fatalf("stats %+v: want ≥ 900 extensions in ≤ 10 per call", st)
		}
		for _, l := range leases {
			l.Ack()
		}
	})
}

func TestExpiredReceiptHandleStopsExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{entry: func(o op, h string) error {
			if o == opChange && h == "rh-x" {
				return fmt.Errorf("entry: %w", sqsloop.ErrReceiptHandleExpired)
			}
			return nil
		}}
		var lost lostLog
		cfg := fastConfig
		cfg.OnLeaseLost = lost.hook
		m := running(t, rec, cfg)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		hbX, hbY := heartbeat.New(), heartbeat.New()
		lx := m.Hold(message("x", 3*time.Second), hbX, nil)
		ly := m.Hold(message("y", 3*time.Second), hbY, nil)
		go beatEvery(ctx, hbX, time.Second)
		go beatEvery(ctx, hbY, time.Second)
		time.Sleep(20 * time.Second)
		if n := len(rec.entriesFor(opChange, "rh-x")); n != 1 {
			t.Fatalf("expired handle extended %d times, want 1 try", n)
		}
		if n := len(rec.entriesFor(opChange, "rh-y")); n < 5 {
			t.Fatalf("the other lease was extended only %d times", n)
		}
		if got := lost.get(); len(got) != 1 || got[0].MessageID != "x" || !errors.Is(got[0].Err, sqsloop.ErrReceiptHandleExpired) {
			t.Fatalf("lost = %+v, want x with ErrReceiptHandleExpired", got)
		}
		if err := lx.Err(); !errors.Is(err, sqsloop.ErrReceiptHandleExpired) {
			t.Fatalf("x: Err = %v", err)
		}
		if err := ly.Err(); err != nil {
			t.Fatalf("y: Err = %v", err)
		}
		lx.Ack()
		ly.Ack()
	})
}

// A transient extension failure is tried again at the next look, not at
// once nor counted against a budget; if it keeps failing, the lease lapses
// at its deadline with that error as the reason.
func TestTransientExtensionFailureIsRetriedAtTheNextLook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{callErr: func(op) error { return errors.New("throttled") }}
		var lostAt time.Time
		var lost []lostLease
		var mu sync.Mutex
		cfg := visibility.Config{Interval: 2 * time.Second, Extension: 10 * time.Second}
		cfg.OnLeaseLost = func(m *sqsloop.Message, err error) {
			ll := lostLease{m.ID, m.ReceiveCount, err}
			mu.Lock()
			defer mu.Unlock()
			lost, lostAt = append(lost, ll), time.Now()
		}
		m := running(t, rec, cfg)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		hb := heartbeat.New()
		t0 := time.Now()
		l := m.Hold(message("t", 10*time.Second), hb, nil)
		go beatEvery(ctx, hb, time.Second)
		time.Sleep(30 * time.Second)

		// First when the deadline (10 s) is 2.5 Intervals away, then at
		// the next look, and once more Interval/2 before the deadline.
		var got []time.Duration
		for _, e := range rec.entriesFor(opChange, "rh-t") {
			got = append(got, e.at.Sub(t0))
		}
		want := []time.Duration{5 * time.Second, 7 * time.Second, 9 * time.Second}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("tries at %v, want %v", got, want)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(lost) != 1 || !strings.Contains(lost[0].Err.Error(), "throttled") || lostAt.Sub(t0) != 10*time.Second {
			t.Fatalf("lost %+v at %v, want one lost with the transient error at the 10 s deadline", lost, lostAt.Sub(t0))
		}
		err := l.Err()
		if !errors.Is(err, visibility.ErrLeaseLost) || !strings.Contains(err.Error(), "throttled") {
			t.Fatalf("Err = %v, want lost with the transient error", err)
		}
		if st := m.Stats(); st.ExtensionFailures != 3 || st.Extensions != 0 || st.LeasesLost != 1 {
			t.Fatalf("stats %+v: want 3 failures, 1 lost", st)
		}
		l.Nack(0) // lost: nothing to send
	})
}

func TestTransientExtensionFailureRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fails atomic.Int64
		rec := &recorder{entry: func(op, string) error {
			if fails.Add(1) <= 2 {
				return errors.New("503")
			}
			return nil
		}}
		m := running(t, rec, visibility.Config{Interval: 2 * time.Second, Extension: 10 * time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		hb := heartbeat.New()
		l := m.Hold(message("r", 10*time.Second), hb, nil)
		go beatEvery(ctx, hb, time.Second)
		time.Sleep(60 * time.Second)
		if err := l.Err(); err != nil {
			t.Fatalf("lease lost after 2 transient failures: %v", err)
		}
		if st := m.Stats(); st.ExtensionFailures != 2 || st.Extensions < 5 {
			t.Fatalf("stats %+v", st)
		}
		l.Ack()
	})
}

func TestCeilingClampsTheLastExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lostLog
		cfg := visibility.Config{FixedInterval: true, Interval: time.Second, Extension: 4 * time.Second, MaxExtension: 10 * time.Second}
		cfg.OnLeaseLost = lost.hook
		m := running(t, rec, cfg)

		msg := message("c", 3*time.Second)
		l := m.Hold(msg, nil, nil) // fixed interval: no heartbeat needed
		time.Sleep(30 * time.Second)
		ceiling := msg.ReceivedAt.Add(10 * time.Second)
		exts := rec.entriesFor(opChange, "rh-c")
		if len(exts) == 0 {
			t.Fatal("never extended")
		}
		for _, e := range exts {
			if end := e.at.Add(e.timeout); end.After(ceiling) {
				t.Fatalf("extension at %v to %v passes the ceiling %v", e.at, end, ceiling)
			}
		}
		if last := exts[len(exts)-1]; last.at.Add(last.timeout).Before(ceiling.Add(-time.Second)) {
			t.Fatalf("last extension ends at %v, want clamped to within a second (SQS's unit) of %v", last.at.Add(last.timeout), ceiling)
		}
		if got := lost.get(); len(got) != 1 || !errors.Is(got[0].Err, sqsloop.ErrLeaseCeiling) {
			t.Fatalf("lost = %+v, want one ErrLeaseCeiling", got)
		}
		if err := l.Err(); !errors.Is(err, sqsloop.ErrLeaseCeiling) {
			t.Fatalf("Err = %v", err)
		}
		l.Ack()
	})
}

// A beat in the last Interval before the deadline still earns an extension:
// the Manager looks once more Interval/2 before the deadline.
func TestBeatInTheLastIntervalIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, fastConfig) // Interval 1 s, Extension 3 s
		hb := heartbeat.New()
		l := m.Hold(message("late", 3*time.Second), hb, nil)
		time.Sleep(2200 * time.Millisecond) // past the look at 1 s and at 2 s
		hb.Beat()                           // 0.8 s before the deadline
		time.Sleep(time.Second)
		if err := l.Err(); err != nil {
			t.Fatalf("lease lost despite a beat before its deadline: %v", err)
		}
		if n := len(rec.entriesFor(opChange, "rh-late")); n != 1 {
			t.Fatalf("%d extensions, want 1", n)
		}
		l.Ack()
	})
}

// One beat earns one extension. A beat is stamped when it is first
// observed: on the real clock by the look that extends for it, a moment
// after that look's own time, so it must not count again at a later
// look. This runs on the real clock because in a synctest bubble time
// stands still within a look and the two moments are equal. It asserts
// counts, not timings: the lease (1 s visibility timeout, extended by 2 s
// when 250 ms from its deadline, so about 0.75 s in) comes near its new
// deadline again about 1.85 s in, is looked at there, and lapses without
// a second extension.
func TestOneBeatEarnsOneExtension(t *testing.T) {
	rec := &recorder{}
	m := newManager(t, rec, visibility.Config{Interval: 100 * time.Millisecond, Extension: 2 * time.Second})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for limit := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(limit) {
				t.Fatalf("no %s after a minute", what)
			}
		}
	}

	hb := heartbeat.New()
	once := m.Hold(message("once", time.Second), hb, nil)
	hb.Beat() // once, and never again
	waitFor("extension of the lease beaten once", func() bool { return m.Stats().Extensions == 1 })
	waitFor("lapse of the lease beaten once", func() bool { return once.Err() != nil })
	if n := len(rec.entriesFor(opChange, "rh-once")); n != 1 {
		t.Errorf("one beat earned %d extensions, want 1", n)
	}
	once.Nack(0)
}

// A beat stamped by the look that extends for it is stamped a moment after
// that look's own now on the real clock: the extension counts from the
// look's now, and asks for the Extension, not a second more (SQS's whole
// seconds, rounded up, would make 2 s and a microsecond 3 s).
func TestABeatStampedAtTheLookEarnsTheExtensionFromTheLook(t *testing.T) {
	m := newManager(t, &recorder{}, visibility.Config{Interval: 100 * time.Millisecond, Extension: 2 * time.Second})
	l := m.Hold(message("now", time.Second), heartbeat.New(), nil)
	defer l.GiveBack()
	now := time.Now()
	m.mu.Lock()
	vt, ok := m.request(l, now.Add(time.Microsecond), now)
	m.mu.Unlock()
	if !ok || vt != 2*time.Second {
		t.Errorf("request = %v, %v; want 2s, true", vt, ok)
	}
}

// A hung extension call is cut off at Interval/2, so an ack decided
// meanwhile, and the rest of the leases, are not held up for longer; one
// failure does not lose the lease.
func TestHungExtensionIsCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{hang: func(o op) bool { return o == opChange }}
		m := running(t, rec, visibility.Config{Interval: 2 * time.Second, Extension: 10 * time.Second})
		hb := heartbeat.New()
		l := m.Hold(message("h", 10*time.Second), hb, nil)
		hb.Beat()
		time.Sleep(5*time.Second + time.Millisecond) // the first call, 2.5 Intervals before the deadline, is on the wire
		began := time.Now()
		l.Ack()
		time.Sleep(2 * time.Second)
		dels := rec.entriesFor(opDelete, "rh-h")
		if len(dels) != 1 {
			t.Fatalf("%d deletes, want 1", len(dels))
		}
		if waited := dels[0].at.Sub(began); waited > time.Second+ackWindow {
			t.Fatalf("the ack waited %v for a hung call, want ≤ Interval/2 + ack window", waited)
		}
		if st := m.Stats(); st.Acked != 1 || st.LeasesLost != 0 || st.ExtensionFailures != 1 {
			t.Fatalf("stats %+v: want acked after one failed extension, nothing lost", st)
		}
	})
}

func TestPermanentErrorsLoseTheLeaseAtOnce(t *testing.T) {
	for _, perm := range []error{sqsloop.ErrMailboxClosed, sqsloop.ErrQueueNotFound, sqsloop.ErrInvalidArgument} {
		t.Run(perm.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{callErr: func(op) error { return fmt.Errorf("call: %w", perm) }}
				m := running(t, rec, fastConfig)
				hb := heartbeat.New()
				l := m.Hold(message("p", 3*time.Second), hb, nil)
				hb.Beat()
				time.Sleep(2 * time.Second)
				if n := len(rec.entriesFor(opChange, "rh-p")); n != 1 {
					t.Fatalf("%d tries, want 1", n)
				}
				if err := l.Err(); !errors.Is(err, perm) {
					t.Fatalf("Err = %v, want lost with %v", err, perm)
				}
				l.Nack(0)
			})
		})
	}
}

// Extensions are whole seconds, as SQS counts them.
func TestExtensionIsRoundedUpToSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, visibility.Config{Interval: time.Second, Extension: 2500 * time.Millisecond})
		hb := heartbeat.New()
		l := m.Hold(message("r", 3*time.Second), hb, nil)
		hb.Beat()
		time.Sleep(1500 * time.Millisecond)
		l.Ack()
		if exts := rec.entriesFor(opChange, "rh-r"); len(exts) != 1 || exts[0].timeout != 3*time.Second {
			t.Fatalf("extensions %+v, want one of 3s", exts)
		}
	})
}

func TestDisabledNeverExtends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, visibility.Config{Disabled: true})
		hb := heartbeat.New()
		l := m.Hold(message("n", 3*time.Second), hb, nil)
		for range 10 {
			hb.Beat()
			time.Sleep(time.Second)
		}
		// Never extended, the 3 s lease lapsed during the 10 s of work.
		if err := l.Err(); !errors.Is(err, visibility.ErrLeaseLapsed) || len(rec.snapshot(opChange)) != 0 {
			t.Fatalf("disabled: Err=%v calls=%d, want visibility.ErrLeaseLapsed and no call", err, len(rec.snapshot(opChange)))
		}
		if st := m.Stats(); st.LeasesLost != 1 {
			t.Fatalf("stats %+v: want the lapsed lease counted", st)
		}
		l.Ack()
	})
}

// With the defaults, no lease outlives the 12 hours SQS allows after the
// receive: the last extension is clamped to that ceiling, and the lease is
// lost with sqsloop.ErrLeaseCeiling when it ends, however its handler beats.
func TestTwelveHourCeilingEndsTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lostLog
		m := running(t, rec, visibility.Config{OnLeaseLost: lost.hook})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		hb := heartbeat.New()
		msg := message("long", 5*time.Minute)
		l := m.Hold(msg, hb, nil)
		go beatEvery(ctx, hb, 45*time.Second)
		time.Sleep(13 * time.Hour)
		ceiling := msg.ReceivedAt.Add(sqsloop.MaxVisibilityTimeout)
		exts := rec.entriesFor(opChange, "rh-long")
		for _, e := range exts {
			if e.at.Add(e.timeout).After(ceiling) {
				t.Fatalf("extension at %v to %v, past the 12 h ceiling", e.at.Sub(msg.ReceivedAt), e.at.Add(e.timeout).Sub(msg.ReceivedAt))
			}
		}
		if last := exts[len(exts)-1]; !last.at.Add(last.timeout).Equal(ceiling) {
			t.Fatalf("last extension ends at %v, want 12h", last.at.Add(last.timeout).Sub(msg.ReceivedAt))
		}
		if got := lost.get(); len(got) != 1 || !errors.Is(got[0].Err, sqsloop.ErrLeaseCeiling) {
			t.Fatalf("lost %+v, want one ErrLeaseCeiling", got)
		}
		if err := l.Err(); !errors.Is(err, sqsloop.ErrLeaseCeiling) {
			t.Fatalf("Err = %v", err)
		}
		l.Nack(0)
	})
}

// A lease held without a heartbeat (its message waits for a handler) is
// kept alive without beats, for at most one Extension after its receive;
// once Start gives it a heartbeat it is extended only on beats.
func TestWaitingLeaseIsKeptAliveUntilStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lostLog
		cfg := fastConfig // Interval 1 s, Extension 3 s
		cfg.OnLeaseLost = lost.hook
		m := running(t, rec, cfg)

		started := m.Hold(message("started", 3*time.Second), nil, nil)
		neverMsg := message("never", 3*time.Second)
		never := m.Hold(neverMsg, nil, nil)
		time.Sleep(2500 * time.Millisecond) // looked at, at 1 s and 2 s, without a beat
		if n := len(rec.entriesFor(opChange, "rh-started")); n == 0 {
			t.Fatal("a waiting lease was not extended")
		}
		hb := heartbeat.New()
		started.Start(hb)
		ctx, cancel := context.WithCancel(t.Context())
		go beatEvery(ctx, hb, time.Second)
		time.Sleep(20 * time.Second)
		if err := started.Err(); err != nil {
			t.Fatalf("a started, beating lease was lost: %v", err)
		}
		err := never.Err()
		if !errors.Is(err, visibility.ErrLeaseLapsed) {
			t.Fatalf("a lease never started: Err = %v, want lapsed", err)
		}
		// Extended while it waited, but only while within one Extension
		// (3 s) of its receive.
		exts := rec.entriesFor(opChange, "rh-never")
		if len(exts) == 0 {
			t.Fatal("a waiting lease never started was not kept alive while it waited")
		}
		for _, e := range exts {
			if e.at.Sub(neverMsg.ReceivedAt) >= 3*time.Second {
				t.Fatalf("a never-started lease extended at %v, past one Extension after its receive", e.at.Sub(neverMsg.ReceivedAt))
			}
		}
		if got := lost.get(); len(got) != 1 || got[0].MessageID != "never" || !errors.Is(got[0].Err, visibility.ErrLeaseLapsed) {
			t.Fatalf("OnLeaseLost got %+v, want the never-started lease lapsed, alone", got)
		}
		cancel()
		time.Sleep(10 * time.Second) // beats stop: the started lease now lapses too
		if err := started.Err(); !errors.Is(err, visibility.ErrLeaseLapsed) {
			t.Fatalf("a started lease without beats: Err = %v, want lapsed", err)
		}
		started.Ack()
		never.Ack()
	})
}
