package visibility

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// A beat in the last Interval before the deadline still earns an extension:
// the extender looks once more Interval/2 before the deadline.
func TestBeatInTheLastIntervalIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		e, _ := New(rec, fastConfig) // Interval 1 s, Extension 3 s
		stop := start(t, e)
		defer stop()
		hb := heartbeat.New()
		l := e.Attach(message("late", 3*time.Second), hb, nil)
		time.Sleep(2200 * time.Millisecond) // past the look at 1 s and at 2 s
		hb.Beat()                           // 0.8 s before the deadline
		time.Sleep(time.Second)
		if err := e.Detach(l); err != nil {
			t.Fatalf("lease lost despite a beat before its deadline: %v", err)
		}
		if n := rec.entriesFor("rh-late"); n != 1 {
			t.Fatalf("%d extensions, want 1", n)
		}
	})
}

// hangingChanger never answers until its context ends.
type hangingChanger struct{ calls int }

func (h *hangingChanger) ChangeVisibility(ctx context.Context, _ []sqsloop.VisibilityChange) ([]error, error) {
	h.calls++
	<-ctx.Done()
	return nil, ctx.Err()
}

// A hung extension call is cut off (Interval/2), so Detach, and the rest of
// the leases, are not held up for longer.
func TestHungCallIsCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hc := &hangingChanger{}
		e, _ := New(hc, Config{Interval: 2 * time.Second, Extension: 10 * time.Second})
		stop := start(t, e)
		defer stop()
		hb := heartbeat.New()
		l := e.Attach(message("h", 10*time.Second), hb, nil)
		hb.Beat()
		time.Sleep(2*time.Second + time.Millisecond) // the first call is in flight
		began := time.Now()
		err := e.Detach(l)
		if waited := time.Since(began); waited > time.Second {
			t.Fatalf("Detach waited %v for a hung call, want ≤ Interval/2", waited)
		}
		if err != nil {
			t.Fatalf("Detach = %v after one failure", err)
		}
	})
}

func TestPermanentErrorsLoseTheLeaseAtOnce(t *testing.T) {
	for _, perm := range []error{sqsloop.ErrMailboxClosed, sqsloop.ErrQueueNotFound, sqsloop.ErrInvalidArgument} {
		t.Run(perm.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{callErr: fmt.Errorf("call: %w", perm)}
				e, _ := New(rec, fastConfig)
				stop := start(t, e)
				defer stop()
				hb := heartbeat.New()
				l := e.Attach(message("p", 3*time.Second), hb, nil)
				hb.Beat()
				time.Sleep(2 * time.Second)
				if n := rec.entriesFor("rh-p"); n != 1 {
					t.Fatalf("%d tries, want 1", n)
				}
				if err := e.Detach(l); !errors.Is(err, perm) {
					t.Fatalf("Detach = %v, want lost with %v", err, perm)
				}
			})
		})
	}
}

func TestMaxFailuresIsBounded(t *testing.T) {
	if err := (Config{MaxFailures: MaxMaxFailures + 1}).Validate(); err == nil || !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Fatalf("Validate = %v", err)
	}
}

// Extensions are whole seconds, as SQS counts them.
func TestExtensionIsRoundedUpToSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		e, _ := New(rec, Config{Interval: time.Second, Extension: 2500 * time.Millisecond})
		stop := start(t, e)
		defer stop()
		hb := heartbeat.New()
		l := e.Attach(message("r", 3*time.Second), hb, nil)
		hb.Beat()
		time.Sleep(1500 * time.Millisecond)
		e.Detach(l)
		if c := rec.snapshot(); len(c) != 1 || c[0].changes[0].Timeout != 3*time.Second {
			t.Fatalf("calls %+v, want one extension of 3s", c)
		}
	})
}

// A lease detached after its deadline passed, before the extender's
// goroutine looked at it, is lost all the same: Detach reports it.
func TestDetachAfterTheDeadlineReportsTheLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reported []LeaseLost
		cfg := fastConfig
		cfg.OnLeaseLost = func(ll LeaseLost) { reported = append(reported, ll) }
		e, _ := New(&recorder{}, cfg)
		// No Run: nobody looks at the lease before Detach.
		l := e.Attach(message("d", 3*time.Second), heartbeat.New(), nil)
		time.Sleep(3 * time.Second)
		if err := e.Detach(l); !errors.Is(err, ErrLeaseLapsed) {
			t.Fatalf("Detach = %v, want ErrLeaseLapsed", err)
		}
		if len(reported) != 1 || e.Stats().Lost != 1 {
			t.Fatalf("reported %v, stats %+v: want the loss reported once", reported, e.Stats())
		}
	})
}
