package leases

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// lockedUntil answers every call once release has passed, as a SQLite
// file whose write lock another connection holds until then: a call made
// before waits (within its context), one made after answers at once.
func lockedUntil(release time.Time) *recorder {
	return &recorder{latency: func(*sent) time.Duration { return max(time.Until(release), 0) }}
}

// Stop's context, not a fixed 1 s, bounds the flush, and a call that times
// out is tried again while it lasts: 8 decided acks meet a mailbox locked
// for 1.5 s. Each delete is cut off after Interval/2 (500 ms) and tried
// again with back-off; once the lock is let go they go through, and Run
// returns then, well before Stop's 25 s. With only 1 s to flush, none is
// sent, and all 8 are counted in AckUnsent (and AckFailed).
func TestStopRetriesSlowAcksWhileItsContextLasts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget time.Duration
		acked  int64
	}{
		{"25 s budget", 25 * time.Second, 8},
		{"1 s budget", time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				rec := lockedUntil(t0.Add(1500 * time.Millisecond))
				m := newManager(t, rec, fastConfig) // Interval 1 s: each call bounded by 500 ms
				ran := make(chan struct{})
				go func() { defer close(ran); _ = m.Run(t.Context()) }()
				for i := range 8 {
					m.Hold(message(fmt.Sprint("a", i), time.Minute), nil, nil).Ack()
				}
				synctest.Wait() // Run runs, the acks on the wire
				ctx, cancel := context.WithTimeout(t.Context(), tc.budget)
				defer cancel()
				err := m.Stop(ctx)
				<-ran
				took := time.Since(t0)
				st := m.Stats()
				t.Logf("Stop = %v after %v; %d delete calls; stats %+v", err, took, len(rec.snapshot(opDelete)), st)
				if st.Acked != tc.acked || st.AckUnsent != 8-tc.acked || st.AckFailed != 8-tc.acked || st.Held != 0 {
					t.Errorf("acked %d, unsent %d, failed %d: want %d acked, the rest unsent", st.Acked, st.AckUnsent, st.AckFailed, tc.acked)
				}
				if tc.acked == 8 {
					if err != nil || took < 1500*time.Millisecond || took >= 2*time.Second {
						t.Errorf("Stop = %v after %v, want nil soon after the lock was let go at 1.5s", err, took)
					}
					if n := len(rec.snapshot(opDelete)); n < 3 {
						t.Errorf("%d delete calls, want the ones cut off after 500 ms tried again", n)
					}
				} else if !errors.Is(err, context.DeadlineExceeded) || took != tc.budget {
					t.Errorf("Stop = %v after %v, want DeadlineExceeded after %v", err, took, tc.budget)
				}
			})
		})
	}
}
