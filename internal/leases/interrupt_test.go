package leases

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// Interrupt settles every lease in one round of calls made at once: decided
// acks deleted, decided nacks made visible after their back-off, holding
// leases given back at once; a call that outlasts the context counts as
// not settled, with the latest deadline; later decisions are ignored and
// nothing more is extended.
func TestInterruptSettlesEveryLeaseInOneRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := newManager(t, rec, visibility.Config{Interval: time.Second, Extension: 5 * time.Second})
		var held []*Lease
		for i := range 25 {
			held = append(held, m.Hold(message(string(rune('a'+i)), 5*time.Second), heartbeat.New(), nil))
		}
		acked, nacked := message("acked", 5*time.Second), message("nacked", 5*time.Second)
		m.Hold(acked, heartbeat.New(), nil).Ack()
		m.Hold(nacked, heartbeat.New(), nil).Nack(time.Minute)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		r := m.Interrupt(ctx)
		if r.Leases != 27 || r.Acked != 1 || r.GivenBack != 26 || r.Failed != 0 || !r.VisibleBy.IsZero() {
			t.Errorf("Interrupted %+v, want 27 leases: 1 acked, 26 given back", r)
		}
		deletes, changes := rec.snapshot(opDelete), rec.snapshot(opChange)
		if len(deletes) != 1 || !slices.Equal(deletes[0].handles, []string{acked.ReceiptHandle}) {
			t.Errorf("deletes %+v, want the decided ack", deletes)
		}
		entries := 0
		for _, c := range changes {
			entries += len(c.handles)
			if len(c.handles) > sqsloop.MaxBatchSize {
				t.Errorf("a batch of %d", len(c.handles))
			}
			for i, h := range c.handles {
				want := time.Duration(0)
				if h == nacked.ReceiptHandle {
					want = time.Minute
				}
				if c.timeouts[i] != want {
					t.Errorf("%s given back with timeout %v, want %v", h, c.timeouts[i], want)
				}
			}
		}
		if len(changes) != 3 || entries != 26 {
			t.Errorf("%d visibility calls with %d entries, want 3 with 26", len(changes), entries)
		}
		if st := m.Stats(); st.Acked != 1 || st.Nacked != 1 || st.GivenBack != 25 || st.DeleteCalls != 1 || st.NackCalls != 3 || st.Held != 0 {
			t.Errorf("stats %+v, want the round counted: 1 acked, 1 nacked, 25 given back, in 4 calls", st)
		}
		held[0].Ack() // ignored: the Manager stopped serving
		if m.Interrupt(ctx).Leases != 0 {
			t.Error("a second Interrupt found leases to settle")
		}
		stop := start(t, m)
		time.Sleep(10 * time.Second)
		stop()
		if n := len(rec.snapshot(opDelete)) + len(rec.snapshot(opChange)); n != 4 {
			t.Errorf("%d calls after Interrupt and a Run, want the 4 of the round", n)
		}
	})
}

// A round whose calls outlast the context returns at its end, counting
// them as not settled and saying when their messages reappear.
func TestInterruptIsBoundedByItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{hang: func(op) bool { return true }}
		m := newManager(t, rec, visibility.Config{Interval: time.Second, Extension: 5 * time.Second})
		msg := message("stuck", 30*time.Second)
		m.Hold(msg, heartbeat.New(), nil)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		began := time.Now()
		r := m.Interrupt(ctx)
		if took := time.Since(began); took != time.Second {
			t.Errorf("Interrupt took %v, want its context's 1s", took)
		}
		if r.Leases != 1 || r.Failed != 1 || !r.VisibleBy.Equal(msg.ReceivedAt.Add(30*time.Second)) {
			t.Errorf("Interrupted %+v, want 1 not settled, visible by its deadline", r)
		}
	})
}

// Leases in a call on the wire when Interrupt comes are not in its round:
// an extension's lease is given back as soon as that call returns, a
// delete that failed is tried again by Run, and Interrupt waits for both
// (within its context) and counts them. Run, which goes on, neither
// extends them again nor spins on them: under synctest a spinning Run
// never lets virtual time pass, and the test never ends.
func TestInterruptSettlesLeasesWhoseCallIsOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		rec := &recorder{
			gate:  gate,
			gated: func(s *sent) bool { return s.op == opDelete || s.timeouts[0] != 0 }, // deletes and extensions
			reply: func(s *sent, n int) ([]error, error) {
				if s.op == opDelete && n == 0 {
					return nil, errors.New("transient") // the first delete fails
				}
				return make([]error, len(s.handles)), nil
			},
		}
		m := running(t, rec, fastConfig)
		extended, acked := message("extended", 3*time.Second), message("acked", 2*time.Second)
		hb := heartbeat.New()
		m.Hold(extended, hb, nil)
		ack := m.Hold(acked, heartbeat.New(), nil)
		time.Sleep(500 * time.Millisecond)
		hb.Beat()
		time.Sleep(550 * time.Millisecond) // the look at 1 s sends the extension: it waits at the gate
		ack.Ack()                          // its delete goes 50 ms later: it waits at the gate too
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		time.AfterFunc(200*time.Millisecond, func() { close(gate) })
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		r := m.Interrupt(ctx)
		if r.Leases != 2 || r.Acked != 1 || r.GivenBack != 1 || r.Failed != 0 {
			t.Errorf("Interrupted %+v, want 2 leases: 1 acked, 1 given back", r)
		}
		time.Sleep(10 * time.Second) // Run goes on
		if got := rec.entriesFor(opChange, extended.ReceiptHandle); len(got) != 2 || got[0].timeout != 3*time.Second || got[1].timeout != 0 {
			t.Errorf("visibility changes of the extended lease %+v, want its extension, then a give-back", got)
		}
		// Its retry comes less than an Interval before its deadline: an ack
		// would be extended then, but not after Interrupt.
		if got := rec.entriesFor(opDelete, acked.ReceiptHandle); len(got) != 2 {
			t.Errorf("%d deletes of the acked lease, want the failed one and its retry", len(got))
		}
		if got := rec.entriesFor(opChange, acked.ReceiptHandle); len(got) != 0 {
			t.Errorf("the acked lease was extended after Interrupt: %+v", got)
		}
		if st := m.Stats(); st.GivenBack != 1 || st.Acked != 1 || st.Held != 0 {
			t.Errorf("stats %+v, want 1 given back, 1 acked, none held", st)
		}
	})
}

// A round of decided acks alone that outlasts its context says when their
// messages reappear too.
func TestInterruptOfAcksAloneIsBoundedByItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{hang: func(op) bool { return true }}
		m := newManager(t, rec, visibility.Config{Interval: time.Second, Extension: 5 * time.Second})
		msg := message("acked", 30*time.Second)
		m.Hold(msg, heartbeat.New(), nil).Ack()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if r := m.Interrupt(ctx); r.Leases != 1 || r.Failed != 1 || !r.VisibleBy.Equal(msg.ReceivedAt.Add(30*time.Second)) {
			t.Errorf("Interrupted %+v, want 1 not settled, visible by its deadline", r)
		}
	})
}
