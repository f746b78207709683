package leases

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// nopMailbox accepts every change and delete and counts calls.
type nopMailbox struct{ calls atomic.Int64 }

func (n *nopMailbox) ChangeVisibility(_ context.Context, ch []sqsloop.VisibilityChange) ([]error, error) {
	n.calls.Add(1)
	return make([]error, len(ch)), nil
}

func (n *nopMailbox) Delete(_ context.Context, handles []string) ([]error, error) {
	n.calls.Add(1)
	return make([]error, len(handles)), nil
}

// BenchmarkManagerInterval measures one interval of the Manager with n
// held leases whose handlers all beat: one op is one interval's work on
// Run's goroutine (plan the extensions, make the calls one after the
// other, apply their outcomes and keep the calls for reuse). It reports the batch calls per interval
// (target ≤ ceil(n/10)) and the CPU per lease per interval (target: flat
// from 100 to 10,000 leases).
func BenchmarkManagerInterval(b *testing.B) {
	for _, n := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprint("leases=", n), func(b *testing.B) {
			const interval = time.Second
			mb := &nopMailbox{}
			m := newManager(b, mb, visibility.Config{Interval: interval, Extension: 3 * interval})
			ctx := context.Background()
			// Virtual clock of the intervals: it starts 13 h in the past so
			// that real beats (stamped with time.Now) always come after the
			// last extension, and leases are renewed before the 12 h ceiling.
			var t0, now time.Time
			hbs := make([]*heartbeat.Heartbeat, n)
			hold := func() {
				m.mu.Lock()
				m.leases = m.leases[:0]
				m.mu.Unlock()
				t0 = time.Now().Add(-13 * time.Hour)
				now = t0
				for i := range hbs {
					hbs[i] = heartbeat.New()
					m.Hold(&sqsloop.Message{ID: fmt.Sprint(i), ReceiptHandle: fmt.Sprint("rh", i), ReceivedAt: t0, VisibilityTimeout: 3 * interval}, hbs[i], nil)
				}
			}
			hold()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if now.Sub(t0) > 11*time.Hour {
					b.StopTimer()
					hold()
					b.StartTimer()
				}
				now = now.Add(interval)
				for _, hb := range hbs {
					hb.Beat()
				}
				m.mu.Lock()
				calls := m.plan(now)
				m.mu.Unlock()
				for _, c := range calls {
					m.send(ctx, c)
				}
				m.mu.Lock()
				for _, c := range calls {
					m.apply(c, now)
					m.recycle(c) // as Run does
				}
				m.mu.Unlock()
			}
			b.StopTimer()
			if st := m.Stats(); st.LeasesLost != 0 || len(m.pending.lost) != 0 {
				b.Fatalf("%d leases lost", st.LeasesLost+int64(len(m.pending.lost)))
			}
			b.ReportMetric(float64(mb.calls.Load())/float64(b.N), "calls/interval")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/lease")
		})
	}
}
