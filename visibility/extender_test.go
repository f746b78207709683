package visibility

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// fastConfig: 3 s visibility leases, extended by 3 s at most every second.
var fastConfig = Config{Interval: time.Second, Extension: 3 * time.Second}

// beatEvery beats hb every period until ctx is done.
func beatEvery(ctx context.Context, hb *heartbeat.Heartbeat, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		hb.Beat()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func TestBeatingLeaseIsExtendedBeforeItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		e, err := New(rec, fastConfig)
		if err != nil {
			t.Fatal(err)
		}
		stop := start(t, e)
		defer stop()

		ctx, cancel := context.WithCancel(t.Context())
		hb := heartbeat.New()
		m := message("a", 3*time.Second)
		l := e.Attach(m, hb, nil)
		go beatEvery(ctx, hb, time.Second)

		time.Sleep(60 * time.Second)
		cancel()
		if err := e.Detach(l); err != nil {
			t.Fatalf("lease lost: %v", err)
		}
		// Every extension must land before the deadline it extends.
		deadline := m.ReceivedAt.Add(3 * time.Second)
		for _, c := range rec.snapshot() {
			if !c.at.Before(deadline) {
				t.Fatalf("extension at %v, after the deadline %v", c.at, deadline)
			}
			if got := c.changes[0].Timeout; got != 3*time.Second {
				t.Fatalf("extension asked for %v, want 3s", got)
			}
			deadline = c.at.Add(3 * time.Second)
		}
		// At most one extension per Interval over 60 s.
		if n := rec.entriesFor("rh-a"); n < 20 || n > 60 {
			t.Fatalf("%d extensions in 60 s, want 20–60", n)
		}
	})
}

func TestSilentLeaseLapsesAndIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var mu sync.Mutex
		var lost []LeaseLost
		cfg := fastConfig
		cfg.CancelOnLeaseLost = true
		cfg.OnLeaseLost = func(ll LeaseLost) { mu.Lock(); lost = append(lost, ll); mu.Unlock() }
		e, _ := New(rec, cfg)
		stop := start(t, e)
		defer stop()

		hb := heartbeat.New()
		ctx, cancel := context.WithCancelCause(t.Context())
		l := e.Attach(message("s", 3*time.Second), hb, cancel)
		hb.Beat()
		time.Sleep(2500 * time.Millisecond) // one extension earned by that beat
		if n := rec.entriesFor("rh-s"); n != 1 {
			t.Fatalf("%d extensions after one beat, want 1", n)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if n := rec.entriesFor("rh-s"); n != 1 {
			t.Fatalf("%d extensions without beats, want still 1", n)
		}
		mu.Lock()
		if len(lost) != 1 || !errors.Is(lost[0].Err, ErrLeaseLapsed) || !errors.Is(lost[0].Err, ErrLeaseLost) {
			t.Fatalf("OnLeaseLost got %+v, want one ErrLeaseLapsed", lost)
		}
		mu.Unlock()
		if cause := context.Cause(ctx); !errors.Is(cause, ErrLeaseLost) {
			t.Fatalf("handler context cause = %v, want ErrLeaseLost", cause)
		}
		if err := e.Detach(l); !errors.Is(err, ErrLeaseLapsed) {
			t.Fatalf("Detach = %v, want ErrLeaseLapsed", err)
		}
	})
}

func TestHundredLeasesTakeAtMostTenCallsPerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		e, _ := New(rec, fastConfig)
		stop := start(t, e)
		defer stop()

		ctx, cancel := context.WithCancel(t.Context())
		var leases []*Lease
		// Received in waves of 10 spread over the first 3 s, as a consumer
		// with 100 handler slots would.
		for i := range 100 {
			if i%10 == 0 && i > 0 {
				time.Sleep(300 * time.Millisecond)
			}
			hb := heartbeat.New()
			leases = append(leases, e.Attach(message(fmt.Sprint(i), 3*time.Second), hb, nil))
			go beatEvery(ctx, hb, time.Second)
		}
		time.Sleep(30 * time.Second)
		cancel()
		for _, l := range leases {
			if err := e.Detach(l); err != nil {
				t.Fatalf("lease lost: %v", err)
			}
		}
		calls := rec.snapshot()
		perSecond := map[int64]int{}
		for _, c := range calls {
			perSecond[c.at.Unix()]++
			if len(c.changes) > sqsloop.MaxBatchSize {
				t.Fatalf("a call carried %d entries", len(c.changes))
			}
		}
		for sec, n := range perSecond {
			if n > 10 {
				t.Fatalf("%d calls in the interval starting at %d, want ≤ 10", n, sec)
			}
		}
		if st := e.Stats(); st.Calls*10 < st.Extended || st.Extended < 100*9 || st.LargestBatch != 10 {
			t.Fatalf("stats %+v: want ≥ 900 extensions in ≤ 10 per call", st)
		}
	})
}

func TestExpiredReceiptHandleStopsExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{entry: func(h string) error {
			if h == "rh-x" {
				return fmt.Errorf("entry: %w", sqsloop.ErrReceiptHandleExpired)
			}
			return nil
		}}
		var mu sync.Mutex
		var lost []string
		cfg := fastConfig
		cfg.OnLeaseLost = func(ll LeaseLost) { mu.Lock(); lost = append(lost, ll.MessageID); mu.Unlock() }
		e, _ := New(rec, cfg)
		stop := start(t, e)
		defer stop()

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		hbX, hbY := heartbeat.New(), heartbeat.New()
		lx := e.Attach(message("x", 3*time.Second), hbX, nil)
		ly := e.Attach(message("y", 3*time.Second), hbY, nil)
		go beatEvery(ctx, hbX, time.Second)
		go beatEvery(ctx, hbY, time.Second)
		time.Sleep(20 * time.Second)
		if n := rec.entriesFor("rh-x"); n != 1 {
			t.Fatalf("expired handle extended %d times, want 1 try", n)
		}
		if n := rec.entriesFor("rh-y"); n < 5 {
			t.Fatalf("the other lease was extended only %d times", n)
		}
		mu.Lock()
		if len(lost) != 1 || lost[0] != "x" {
			t.Fatalf("lost = %v, want [x]", lost)
		}
		mu.Unlock()
		if err := e.Detach(lx); !errors.Is(err, sqsloop.ErrReceiptHandleExpired) {
			t.Fatalf("Detach(x) = %v", err)
		}
		if err := e.Detach(ly); err != nil {
			t.Fatalf("Detach(y) = %v", err)
		}
	})
}

func TestTransientFailuresRetryThenLoseTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{callErr: errors.New("throttled")}
		cfg := Config{Interval: 2 * time.Second, Extension: 10 * time.Second}
		e, _ := New(rec, cfg)
		stop := start(t, e)
		defer stop()

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		hb := heartbeat.New()
		l := e.Attach(message("t", 10*time.Second), hb, nil)
		go beatEvery(ctx, hb, time.Second)
		time.Sleep(30 * time.Second)
		if n := rec.entriesFor("rh-t"); n != DefaultMaxFailures {
			t.Fatalf("%d tries, want %d", n, DefaultMaxFailures)
		}
		err := e.Detach(l)
		if !errors.Is(err, ErrLeaseLost) || err == nil || !strings.Contains(err.Error(), "throttled") {
			t.Fatalf("Detach = %v, want lost with the transient error", err)
		}
	})
}

func TestTransientFailureRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fails int
		rec := &recorder{entry: func(string) error {
			if fails < 2 {
				fails++
				return errors.New("503")
			}
			return nil
		}}
		e, _ := New(rec, Config{Interval: 2 * time.Second, Extension: 10 * time.Second})
		stop := start(t, e)
		defer stop()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		hb := heartbeat.New()
		l := e.Attach(message("r", 10*time.Second), hb, nil)
		go beatEvery(ctx, hb, time.Second)
		time.Sleep(60 * time.Second)
		if err := e.Detach(l); err != nil {
			t.Fatalf("lease lost after 2 transient failures: %v", err)
		}
		if st := e.Stats(); st.Failures != 2 || st.Extended < 5 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestCeilingClampsTheLastExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var mu sync.Mutex
		var lost []LeaseLost
		cfg := Config{Policy: FixedInterval, Interval: time.Second, Extension: 4 * time.Second, MaxExtension: 10 * time.Second}
		cfg.OnLeaseLost = func(ll LeaseLost) { mu.Lock(); lost = append(lost, ll); mu.Unlock() }
		e, _ := New(rec, cfg)
		stop := start(t, e)
		defer stop()

		m := message("c", 3*time.Second)
		l := e.Attach(m, nil, nil) // fixed interval: no heartbeat needed
		time.Sleep(30 * time.Second)
		ceiling := m.ReceivedAt.Add(10 * time.Second)
		for _, c := range rec.snapshot() {
			if end := c.at.Add(c.changes[0].Timeout); end.After(ceiling) {
				t.Fatalf("extension at %v to %v passes the ceiling %v", c.at, end, ceiling)
			}
		}
		last := rec.snapshot()[len(rec.snapshot())-1]
		if end := last.at.Add(last.changes[0].Timeout); !end.Equal(ceiling) {
			t.Fatalf("last extension ends at %v, want clamped to %v", end, ceiling)
		}
		mu.Lock()
		if len(lost) != 1 || !errors.Is(lost[0].Err, sqsloop.ErrLeaseCeiling) {
			t.Fatalf("lost = %+v, want one ErrLeaseCeiling", lost)
		}
		mu.Unlock()
		if err := e.Detach(l); !errors.Is(err, sqsloop.ErrLeaseCeiling) {
			t.Fatalf("Detach = %v", err)
		}
	})
}

func TestDetachWaitsForAnExtensionInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		rec := &recorder{gate: gate}
		e, _ := New(rec, fastConfig)
		stop := start(t, e)
		defer stop()

		hb := heartbeat.New()
		l := e.Attach(message("d", 3*time.Second), hb, nil)
		hb.Beat()
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait() // the extension call is now blocked on the gate
		if len(rec.snapshot()) != 1 {
			t.Fatal("no extension in flight")
		}
		detached := make(chan struct{})
		go func() { e.Detach(l); close(detached) }()
		synctest.Wait()
		select {
		case <-detached:
			t.Fatal("Detach returned while the extension was in flight")
		default:
		}
		close(gate)
		<-detached
		if e.Len() != 0 {
			t.Fatalf("%d leases left after Detach", e.Len())
		}
	})
}

func TestDisabledNeverCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		e, _ := New(rec, Config{Disabled: true})
		stop := start(t, e)
		defer stop()
		hb := heartbeat.New()
		l := e.Attach(message("n", 3*time.Second), hb, nil)
		for range 10 {
			hb.Beat()
			time.Sleep(time.Second)
		}
		// Never extended, the 3 s lease lapsed during the 10 s of work.
		if err := e.Detach(l); !errors.Is(err, ErrLeaseLapsed) || len(rec.snapshot()) != 0 {
			t.Fatalf("disabled extender: Detach=%v calls=%d, want ErrLeaseLapsed and no call", err, len(rec.snapshot()))
		}
		if st := e.Stats(); st.Lost != 1 {
			t.Fatalf("stats %+v: want the lapsed lease counted", st)
		}
	})
}

func TestSecondRunIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, _ := New(&recorder{}, Config{})
		stop := start(t, e)
		defer stop()
		synctest.Wait()
		if err := e.Run(t.Context()); err == nil {
			t.Fatal("second Run returned nil")
		}
	})
}
