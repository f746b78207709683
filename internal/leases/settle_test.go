package leases

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// Settling: acks, nacks and give-backs, batched, in order, retried.

// A decision made while an extension of the same lease is on the wire goes
// out only after that call has returned: a lease is in at most one call at
// a time, so the ack cannot be overtaken by the extension.
func TestDecisionDuringAnExtensionWaitsForIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		open := sync.OnceFunc(func() { close(gate) })
		rec := &recorder{gate: gate}
		m := running(t, rec, fastConfig)
		defer open() // before stop, even when the test fails

		hb := heartbeat.New()
		l := m.Hold(message("d", 3*time.Second), hb, nil)
		hb.Beat()
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait() // the extension call sent at 1 s is blocked on the gate
		if n := len(rec.snapshot(opChange)); n != 1 {
			t.Fatalf("%d extension calls, want 1 on the wire", n)
		}
		l.Ack()
		time.Sleep(400 * time.Millisecond)
		if n := len(rec.snapshot(opDelete)); n != 0 {
			t.Fatalf("%d deletes while the extension was on the wire, want 0", n)
		}
		open()
		time.Sleep(time.Second)
		ext := rec.entriesFor(opChange, "rh-d")
		del := rec.entriesFor(opDelete, "rh-d")
		if len(ext) != 1 || len(del) != 1 || del[0].at.Before(ext[0].back) {
			t.Fatalf("extension %+v, delete %+v: want one delete after the extension returned", ext, del)
		}
		if st := m.Stats(); st.Acked != 1 || st.Extensions != 1 || st.LeasesLost != 0 || st.Held != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// Acks decided together go in DeleteMessageBatch calls of 10 at once; the
// rest waits ack window for company, then goes.
func TestAcksAreCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, fastConfig)
		var leases []*Lease
		for i := range 25 {
			leases = append(leases, m.Hold(message(fmt.Sprint(i), 3*time.Second), nil, nil))
		}
		synctest.Wait()
		t0 := time.Now()
		for _, l := range leases {
			l.Ack()
		}
		time.Sleep(time.Second)
		calls := rec.snapshot(opDelete)
		var got []string
		seen := map[string]int{}
		for _, c := range calls {
			got = append(got, fmt.Sprintf("%d@%v", len(c.handles), c.at.Sub(t0)))
			for _, h := range c.handles {
				seen[h]++
			}
		}
		if want := fmt.Sprint([]string{"10@0s", "10@0s", "5@" + ackWindow.String()}); fmt.Sprint(got) != want {
			t.Fatalf("delete calls %v, want %v", got, want)
		}
		if len(seen) != 25 {
			t.Fatalf("%d messages deleted, want 25", len(seen))
		}
		for h, n := range seen {
			if n != 1 {
				t.Fatalf("%s deleted %d times", h, n)
			}
		}
		if st := m.Stats(); st.DeleteCalls != 3 || st.Acked != 25 || st.Held != 0 || st.NackCalls != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// A lone ack waits exactly the ack window (50 ms) for others to share its
// call.
func TestLoneAckGoesAfterTheAckWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, fastConfig)
		l := m.Hold(message("a", 3*time.Second), heartbeat.New(), nil)
		t0 := time.Now()
		l.Ack()
		time.Sleep(time.Second)
		dels := rec.entriesFor(opDelete, "rh-a")
		if len(dels) != 1 || dels[0].at.Sub(t0) != ackWindow {
			t.Fatalf("deletes %+v, want one %v after the ack", dels, ackWindow)
		}
	})
}

// checkNeverLapsed fails t if a call about handle was made after the
// lease's deadline, as set by the receive (vt at t0) and by every
// extension, all of which succeed.
func checkNeverLapsed(t *testing.T, rec *recorder, handle string, t0 time.Time, vt time.Duration) {
	t.Helper()
	var all []entry
	exts := rec.entriesFor(opChange, handle)
	all = append(all, exts...)
	all = append(all, rec.entriesFor(opDelete, handle)...)
	slices.SortStableFunc(all, func(a, b entry) int { return a.at.Compare(b.at) })
	deadline := t0.Add(vt)
	for _, e := range all {
		if !e.at.Before(deadline) {
			t.Fatalf("%s: a call at %v, after the deadline %v", handle, e.at.Sub(t0), deadline.Sub(t0))
		}
		if e.timeout > 0 {
			deadline = e.at.Add(e.timeout)
		}
	}
}

// An ack that fails transiently is tried again with back-off, and the
// Manager keeps the lease alive meanwhile, extending it without beats when
// its deadline nears: the message never lapses, and ends acked.
func TestTransientAckFailureIsRetriedWhileTheLeaseIsKeptAlive(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  func(t0 time.Time) *recorder
	}{
		{"whole call", func(t0 time.Time) *recorder {
			return &recorder{callErr: func(o op) error {
				if o == opDelete && time.Since(t0) < 10*time.Second {
					return errors.New("throttled")
				}
				return nil
			}}
		}},
		{"one entry", func(t0 time.Time) *recorder {
			return &recorder{entry: func(o op, h string) error {
				if o == opDelete && h == "rh-a" && time.Since(t0) < 10*time.Second {
					return errors.New("InternalError")
				}
				return nil
			}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				rec := tc.rec(t0)
				m := running(t, rec, fastConfig)
				a := m.Hold(message("a", 3*time.Second), heartbeat.New(), nil) // no heartbeat at all
				b := m.Hold(message("b", 3*time.Second), heartbeat.New(), nil)
				a.Ack()
				b.Ack()
				time.Sleep(20 * time.Second)

				checkNeverLapsed(t, rec, "rh-a", t0, 3*time.Second)
				dels := rec.entriesFor(opDelete, "rh-a")
				if len(dels) < 5 || dels[len(dels)-1].at.Sub(t0) < 10*time.Second {
					t.Fatalf("%d deletes of a, the last at %v: want retries until 10 s", len(dels), dels[len(dels)-1].at.Sub(t0))
				}
				if exts := rec.entriesFor(opChange, "rh-a"); len(exts) < 3 {
					t.Fatalf("a extended %d times while its ack was retried for 10 s, want ≥ 3", len(exts))
				}
				if err := a.Err(); err != nil {
					t.Fatalf("a: Err = %v", err)
				}
				st := m.Stats()
				if st.Acked != 2 || st.AckRetries < 4 || st.AckFailed != 0 || st.LeasesLost != 0 || st.Held != 0 {
					t.Fatalf("stats %+v: want both acked after retries, nothing lost", st)
				}
			})
		})
	}
}

// A stale receipt handle, or any permanent error, ends the ack at once:
// no retry.
func TestStaleAckIsNotRetried(t *testing.T) {
	for _, perm := range []error{sqsloop.ErrReceiptHandleExpired, sqsloop.ErrInvalidArgument} {
		t.Run(perm.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{entry: func(o op, _ string) error {
					if o == opDelete {
						return fmt.Errorf("entry: %w", perm)
					}
					return nil
				}}
				m := running(t, rec, fastConfig)
				l := m.Hold(message("s", 3*time.Second), heartbeat.New(), nil)
				l.Ack()
				time.Sleep(10 * time.Second)
				if n := len(rec.entriesFor(opDelete, "rh-s")); n != 1 {
					t.Fatalf("%d deletes, want 1", n)
				}
				if n := len(rec.entriesFor(opChange, "rh-s")); n != 0 {
					t.Fatalf("%d extensions of a failed ack, want 0", n)
				}
				if st := m.Stats(); st.AckFailed != 1 || st.Acked != 0 || st.AckRetries != 0 || st.Held != 0 {
					t.Fatalf("stats %+v", st)
				}
			})
		})
	}
}

// An ack of a lease already lost is sent once, and counted apart.
func TestLateAckIsSentOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fail  bool
		stats func(visibility.Stats) bool
	}{
		{"succeeds", false, func(st visibility.Stats) bool { return st.LateAcked == 1 && st.Acked == 0 && st.AckFailed == 0 }},
		{"fails", true, func(st visibility.Stats) bool { return st.LateAcked == 0 && st.AckFailed == 1 && st.AckRetries == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{callErr: func(op) error {
					if tc.fail {
						return errors.New("throttled")
					}
					return nil
				}}
				m := running(t, rec, fastConfig)
				l := m.Hold(message("late", 3*time.Second), heartbeat.New(), nil)
				time.Sleep(4 * time.Second) // no beat: lapsed at 3 s
				if !errors.Is(l.Err(), visibility.ErrLeaseLapsed) {
					t.Fatalf("Err = %v, want lapsed", l.Err())
				}
				l.Ack()
				time.Sleep(10 * time.Second)
				if n := len(rec.entriesFor(opDelete, "rh-late")); n != 1 {
					t.Fatalf("%d deletes, want 1", n)
				}
				if st := m.Stats(); !tc.stats(st) || st.LeasesLost != 1 || st.Held != 0 {
					t.Fatalf("stats %+v", st)
				}
			})
		})
	}
}

// Nack(delay) makes the message visible after delay, clamped to 0–12 h;
// nacks decided together share a call.
func TestNackSendsItsDelayClamped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, fastConfig)
		delays := map[string]time.Duration{"a": 30 * time.Second, "b": -5 * time.Second, "c": 13 * time.Hour}
		want := map[string]time.Duration{"a": 30 * time.Second, "b": 0, "c": sqsloop.MaxVisibilityTimeout}
		for id, d := range delays {
			m.Hold(message(id, 3*time.Second), heartbeat.New(), nil).Nack(d)
		}
		time.Sleep(time.Second)
		for id, w := range want {
			if e := rec.entriesFor(opChange, "rh-"+id); len(e) != 1 || e[0].timeout != w {
				t.Errorf("%s: changes %+v, want one of %v", id, e, w)
			}
		}
		if st := m.Stats(); st.NackCalls != 1 || st.Nacked != 3 || st.GivenBack != 0 || st.ExtensionCalls != 0 || st.Held != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// GiveBack makes the message visible at once, counted apart from nacks.
func TestGiveBackSendsZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, fastConfig)
		m.Hold(message("g", 3*time.Second), heartbeat.New(), nil).GiveBack()
		time.Sleep(time.Second)
		if e := rec.entriesFor(opChange, "rh-g"); len(e) != 1 || e[0].timeout != 0 {
			t.Fatalf("changes %+v, want one of 0s", e)
		}
		if st := m.Stats(); st.GivenBack != 1 || st.Nacked != 0 || st.NackCalls != 1 || st.Held != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// Only the first decision about a lease counts.
func TestOnlyTheFirstDecisionCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, fastConfig)
		a := m.Hold(message("a", 3*time.Second), heartbeat.New(), nil)
		b := m.Hold(message("b", 3*time.Second), heartbeat.New(), nil)
		c := m.Hold(message("c", 3*time.Second), heartbeat.New(), nil)
		a.Ack()
		a.Nack(5 * time.Second)
		a.GiveBack()
		b.Nack(5 * time.Second)
		b.Ack()
		b.GiveBack()
		c.GiveBack()
		c.Ack()
		c.Nack(time.Second)
		time.Sleep(time.Second)
		// And after their calls went.
		a.Nack(0)
		b.Ack()
		c.Ack()
		time.Sleep(time.Second)
		if d := rec.snapshot(opDelete); len(d) != 1 || fmt.Sprint(d[0].handles) != "[rh-a]" {
			t.Fatalf("deletes %+v, want rh-a only", d)
		}
		if e := rec.entriesFor(opChange, "rh-b"); len(e) != 1 || e[0].timeout != 5*time.Second {
			t.Fatalf("b: changes %+v, want one nack of 5s", e)
		}
		if e := rec.entriesFor(opChange, "rh-c"); len(e) != 1 || e[0].timeout != 0 {
			t.Fatalf("c: changes %+v, want one give-back", e)
		}
		if st := m.Stats(); st.Acked != 1 || st.Nacked != 1 || st.GivenBack != 1 || st.Held != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// GiveBackAll gives back every lease still holding, including one whose
// extension is on the wire (after that call returns), and leaves decided
// leases alone.
func TestGiveBackAllGivesBackHoldingLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		open := sync.OnceFunc(func() { close(gate) })
		rec := &recorder{gate: gate, gated: func(s *sent) bool {
			return s.op == opChange && slices.Contains(s.handles, "rh-w") && s.timeouts[0] > 0
		}}
		m := running(t, rec, fastConfig)
		defer open()                                                   // before stop, even when the test fails
		h := m.Hold(message("h", 3*time.Second), heartbeat.New(), nil) // holding, silent
		hbW := heartbeat.New()
		w := m.Hold(message("w", 3*time.Second), hbW, nil) // its extension will hang
		a := m.Hold(message("a", 3*time.Second), heartbeat.New(), nil)
		n := m.Hold(message("n", 3*time.Second), heartbeat.New(), nil)
		a.Ack()
		n.Nack(time.Minute)
		hbW.Beat()
		time.Sleep(1500 * time.Millisecond) // w's extension went at 1 s
		if len(rec.entriesFor(opChange, "rh-w")) != 1 {
			t.Fatal("w's extension is not on the wire")
		}
		m.GiveBackAll()
		time.Sleep(500 * time.Millisecond)
		if e := rec.entriesFor(opChange, "rh-h"); len(e) != 1 || e[0].timeout != 0 {
			t.Fatalf("h: changes %+v, want one give-back", e)
		}
		if e := rec.entriesFor(opChange, "rh-w"); len(e) != 1 {
			t.Fatalf("w: changes %+v while its extension is on the wire, want only it", e)
		}
		open()
		time.Sleep(500 * time.Millisecond)
		e := rec.entriesFor(opChange, "rh-w")
		if len(e) != 2 || e[1].timeout != 0 || e[1].at.Before(e[0].back) {
			t.Fatalf("w: changes %+v, want its extension then a give-back after it", e)
		}
		if e := rec.entriesFor(opChange, "rh-n"); len(e) != 1 || e[0].timeout != time.Minute {
			t.Fatalf("n: changes %+v, want its nack only", e)
		}
		if len(rec.entriesFor(opChange, "rh-a")) != 0 || len(rec.entriesFor(opDelete, "rh-a")) != 1 {
			t.Fatal("a: want its delete only")
		}
		if st := m.Stats(); st.GivenBack != 2 || st.Acked != 1 || st.Nacked != 1 || st.Held != 0 || st.LeasesLost != 0 {
			t.Fatalf("stats %+v", st)
		}
		h.Ack() // already given back: ignored
		w.Ack()
		time.Sleep(time.Second)
		if n := len(rec.snapshot(opDelete)); n != 1 {
			t.Fatalf("%d deletes, want a's only", n)
		}
	})
}

// An extension sent before the deadline whose answer comes after it: a
// decision made meanwhile waits for that answer, which says whether the
// lease held. A success means it did, so the ack is an ordinary one and
// nothing is reported lost.
func TestDecisionPastTheDeadlineWaitsForTheExtensionOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		open := sync.OnceFunc(func() { close(gate) })
		rec := &recorder{gate: gate, gated: func(s *sent) bool { return s.op == opChange }}
		var lost lostLog
		cfg := fastConfig
		cfg.OnLeaseLost = lost.hook
		m := running(t, rec, cfg)
		defer open() // before stop, even when the test fails
		hb := heartbeat.New()
		l := m.Hold(message("x", 3*time.Second), hb, nil)
		hb.Beat()
		// The extension sent at 1 s has no answer yet at 3.2 s, past the
		// deadline it was sent to move (3 s).
		time.Sleep(3200 * time.Millisecond)
		if err := l.Err(); err != nil {
			t.Fatalf("Err = %v while the extension is on the wire, want nil until it answers", err)
		}
		l.Ack()
		time.Sleep(300 * time.Millisecond)
		open() // it succeeded: the lease holds until 4 s
		time.Sleep(time.Second)
		if st := m.Stats(); st.Acked != 1 || st.LateAcked != 0 || st.LeasesLost != 0 || len(lost.get()) != 0 {
			t.Fatalf("stats %+v, lost %+v: want an ordinary ack, nothing lost", st, lost.get())
		}
		if err := l.Err(); err != nil {
			t.Fatalf("Err = %v, want nil", err)
		}
	})
}

// An ack retried while Run flushes, whose lease ended meanwhile, is a late
// ack of a lost lease, as it would be before the flush.
func TestFlushedAckPastItsDeadlineIsLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{reply: func(s *sent, n int) ([]error, error) {
			if s.op == opDelete && n == 0 {
				return nil, errors.New("throttled")
			}
			return make([]error, len(s.handles)), nil
		}}
		var lost lostLog
		m := newManager(t, rec, visibility.Config{Disabled: true, OnLeaseLost: lost.hook})
		stop := start(t, m)
		l := m.Hold(message("f", 3*time.Second), heartbeat.New(), nil)
		time.Sleep(2900 * time.Millisecond)
		l.Ack() // sent at 2.95 s, fails, retried at 3.05 s
		time.Sleep(100 * time.Millisecond)
		stop() // at 3 s: the retry goes while flushing, after the deadline
		if n := len(rec.snapshot(opDelete)); n != 2 {
			t.Fatalf("%d deletes, want 2", n)
		}
		if st := m.Stats(); st.LateAcked != 1 || st.Acked != 0 || st.LeasesLost != 1 || len(lost.get()) != 1 {
			t.Fatalf("stats %+v, lost %+v: want a late ack and the loss reported", st, lost.get())
		}
	})
}

// A delete that hangs cannot let the lease lapse: it is cut off in time
// for the Manager to extend the lease, as an extension is, and the ack is
// tried again until it succeeds. (With a 7.73 s lease, a back-off of
// Interval/2 after a delete cut off at Interval/2 would end past the
// deadline: the retry must be looked at by Interval/2 before it.)
func TestHungAckDoesNotLetTheLeaseLapse(t *testing.T) {
	for _, vt := range []time.Duration{10 * time.Second, 7730 * time.Millisecond, 5500 * time.Millisecond} {
		t.Run(vt.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				rec := &recorder{hang: func(o op) bool { return o == opDelete && time.Since(t0) < 30*time.Second }}
				var lost lostLog
				m := running(t, rec, visibility.Config{Interval: 2 * time.Second, Extension: 10 * time.Second, OnLeaseLost: lost.hook})
				l := m.Hold(message("a", vt), heartbeat.New(), nil)
				l.Ack()
				time.Sleep(time.Minute)
				checkNeverLapsed(t, rec, "rh-a", t0, vt)
				if st := m.Stats(); st.Acked != 1 || st.LeasesLost != 0 || st.AckFailed != 0 || st.Held != 0 || len(lost.get()) != 0 {
					t.Fatalf("stats %+v, lost %+v: want acked, never lost", st, lost.get())
				}
			})
		})
	}
}

// GiveBackAll gives back the leases held when it is called; a lease held
// after it is served as any other (its extension does not give it back).
func TestGiveBackAllLeavesLaterLeasesAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, fastConfig)
		m.Hold(message("early", 3*time.Second), heartbeat.New(), nil)
		m.GiveBackAll()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		hb := heartbeat.New()
		l := m.Hold(message("later", 3*time.Second), hb, nil)
		go beatEvery(ctx, hb, 300*time.Millisecond) // never at the instant of a look
		time.Sleep(5 * time.Second)
		l.Ack()
		time.Sleep(time.Second)
		for _, e := range rec.entriesFor(opChange, "rh-later") {
			if e.timeout == 0 {
				t.Fatalf("the later lease was given back at %v", e.at)
			}
		}
		if st := m.Stats(); st.GivenBack != 1 || st.Acked != 1 || st.Extensions < 3 {
			t.Fatalf("stats %+v: want the early lease given back, the later one extended and acked", st)
		}
	})
}

// A lease that can no longer be extended (the ceiling) keeps its ack's
// back-off to the end: retrying it every ack window before the deadline
// would not keep it any longer.
func TestAckRetryOfACappedLeaseKeepsItsBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := failing(opDelete, errors.New("throttled"))
		m := running(t, rec, visibility.Config{FixedInterval: true, Interval: 2 * time.Second, Extension: 5 * time.Second, MaxExtension: 10 * time.Second})
		t0 := time.Now()
		l := m.Hold(message("c", 4*time.Second), heartbeat.New(), nil)
		time.Sleep(7 * time.Second) // extended to the 10 s ceiling at 6 s
		l.Ack()
		time.Sleep(5 * time.Second)
		last := 0
		for _, e := range rec.entriesFor(opDelete, "rh-c") {
			if e.at.Sub(t0) >= 9*time.Second {
				last++
			}
		}
		if last > 2 {
			t.Fatalf("%d deletes in the last second before the ceiling, want its back-off (≤ 2)", last)
		}
	})
}

// A nack that fails transiently is tried again while its lease holds; one
// that keeps failing until the deadline is counted NackFailed (the message
// becomes visible then all the same).
func TestTransientNackFailureIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{reply: func(s *sent, n int) ([]error, error) {
			errs := make([]error, len(s.handles))
			for i, h := range s.handles {
				if h == "rh-never" || (s.op == opChange && n == 0) {
					errs[i] = errors.New("throttled")
				}
			}
			return errs, nil
		}}
		m := running(t, rec, fastConfig)
		m.Hold(message("once", 3*time.Second), heartbeat.New(), nil).Nack(time.Minute)
		m.Hold(message("never", 3*time.Second), heartbeat.New(), nil).GiveBack()
		time.Sleep(5 * time.Second)
		if e := rec.entriesFor(opChange, "rh-once"); len(e) != 2 || e[1].timeout != time.Minute {
			t.Fatalf("once: changes %+v, want the nack sent twice", e)
		}
		if e := rec.entriesFor(opChange, "rh-never"); len(e) < 3 || e[len(e)-1].at.Sub(e[0].at) >= 3*time.Second {
			t.Fatalf("never: changes %+v, want retries within its lease", e)
		}
		if st := m.Stats(); st.Nacked != 1 || st.NackFailed != 1 || st.GivenBack != 0 || st.Held != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// Many leases, decided at random (some twice), over a mailbox that fails
// at random: a lease is never in two calls at once, every ack is counted
// exactly once, and nothing is held at the end.
func TestEveryLeaseIsSettledOnceAndAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		attempts := map[string]int{}
		rec := &recorder{entry: func(o op, h string) error {
			mu.Lock()
			defer mu.Unlock()
			attempts[h]++
			switch (attempts[h]*7 + len(h)) % 5 { // deterministic, uneven
			case 0:
				return errors.New("throttled")
			case 1:
				if attempts[h] > 6 {
					return fmt.Errorf("entry: %w", sqsloop.ErrReceiptHandleExpired)
				}
			}
			return nil
		}, latency: func(s *sent) time.Duration {
			// 10–450 ms, under the calls' Interval/2 timeout.
			return time.Duration(10+(len(s.handles)*37+s.at.Nanosecond()/1e6)%440) * time.Millisecond
		}}
		m := newManager(t, rec, fastConfig)
		stop := start(t, m)
		ctx, cancel := context.WithCancel(t.Context())
		rng := rand.New(rand.NewPCG(1, 2))
		const n = 300
		acks := 0
		var wg sync.WaitGroup
		for i := range n {
			hb := heartbeat.New()
			l := m.Hold(message(fmt.Sprint("m", i), 3*time.Second), hb, nil)
			work := time.Duration(rng.IntN(8000)) * time.Millisecond
			first, second := rng.IntN(3), rng.IntN(3)
			if first == 0 {
				acks++
			}
			wg.Go(func() {
				bctx, bcancel := context.WithTimeout(ctx, work)
				defer bcancel()
				beatEvery(bctx, hb, 700*time.Millisecond)
				for _, d := range []int{first, second} {
					switch d {
					case 0:
						l.Ack()
					case 1:
						l.Nack(10 * time.Second)
					default:
						l.GiveBack()
					}
				}
			})
			if i%10 == 9 {
				time.Sleep(100 * time.Millisecond)
			}
		}
		wg.Wait()
		time.Sleep(30 * time.Second)
		cancel()
		stop()

		byHandle := map[string][]sent{}
		for _, o := range []op{opChange, opDelete} {
			for _, c := range rec.snapshot(o) {
				for _, h := range c.handles {
					byHandle[h] = append(byHandle[h], c)
				}
			}
		}
		for h, calls := range byHandle {
			slices.SortFunc(calls, func(a, b sent) int { return a.at.Compare(b.at) })
			for i := 1; i < len(calls); i++ {
				if calls[i].at.Before(calls[i-1].back) {
					t.Fatalf("%s: a %v call at %v while a %v call was on the wire until %v",
						h, calls[i].op, calls[i].at, calls[i-1].op, calls[i-1].back)
				}
			}
		}
		st := m.Stats()
		if got := st.Acked + st.LateAcked + st.AckFailed; got != int64(acks) {
			t.Fatalf("stats %+v: %d acks counted, want %d", st, got, acks)
		}
		if got := st.Nacked + st.GivenBack + st.NackFailed; got > int64(n-acks) {
			t.Fatalf("stats %+v: %d nacks and give-backs counted, want ≤ %d", st, got, n-acks)
		}
		if st.Held != 0 {
			t.Fatalf("stats %+v: want nothing held", st)
		}
	})
}

// An ack whose every call fails at once (the database or the endpoint is
// down: connection refused), while its extensions fail too, keeps its
// back-off to the end of its lease: once past its last look (Interval/2
// before the deadline) it is not retried in a loop until the deadline. A
// PostgreSQL crash test made 40,000 retries of 10 acks in half a second
// each.
func TestAckFailingWithEverythingElseKeepsItsBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		calls := 0
		down := errors.New("connection refused")
		rec := &recorder{callErr: func(op) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls > 200 { // a loop: end it (the ack succeeds) so the test fails instead of spinning
				return nil
			}
			return down
		}}
		m := running(t, rec, fastConfig) // Interval 1 s: back-off at most 500 ms
		// Ten acks: a full batch goes at once, without the 50 ms ack window.
		for i := range sqsloop.MaxBatchSize {
			m.Hold(message(fmt.Sprint("m", i), 3*time.Second), heartbeat.New(), nil).Ack()
		}
		time.Sleep(5 * time.Second) // past the 3 s leases
		mu.Lock()
		n := calls
		mu.Unlock()
		// 3 s of back-off from 100 ms, at most 500 ms: about 10 delete
		// calls of the 10 acks, and extension calls at the last looks.
		if n > 25 {
			t.Errorf("%d calls for 10 acks over their 3 s leases with every call failing, want their back-off (≤ 25)", n)
		}
		if st := m.Stats(); st.AckFailed != 10 || st.Acked != 0 {
			t.Errorf("stats %+v: want the acks failed for good at the deadline", st)
		}
	})
}
