package visibility

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// nopChanger accepts every change and counts calls.
type nopChanger struct{ calls atomic.Int64 }

func (n *nopChanger) ChangeVisibility(_ context.Context, ch []sqsloop.VisibilityChange) ([]error, error) {
	n.calls.Add(1)
	return make([]error, len(ch)), nil
}

// BenchmarkExtenderInterval measures one interval of the extender with n
// in-flight leases whose handlers all beat: one op is one interval's sweep.
// It reports the batch calls per interval (target ≤ ceil(n/10)) and the CPU
// per lease per interval (target: flat from 100 to 10,000 leases).
func BenchmarkExtenderInterval(b *testing.B) {
	for _, n := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprint("leases=", n), func(b *testing.B) {
			const interval = time.Second
			mb := &nopChanger{}
			e, err := New(mb, Config{Interval: interval, Extension: 3 * interval})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			// Virtual clock of the sweeps: it starts 13 h in the past so that
			// real beats (stamped with time.Now) always come after the last
			// extension, and leases are renewed before the 12 h ceiling.
			var t0, now time.Time
			hbs := make([]*heartbeat.Heartbeat, n)
			attach := func() {
				e.mu.Lock()
				e.leases = e.leases[:0]
				e.mu.Unlock()
				t0 = time.Now().Add(-13 * time.Hour)
				now = t0
				for i := range hbs {
					hbs[i] = heartbeat.New()
					e.Attach(&sqsloop.Message{ID: fmt.Sprint(i), ReceiptHandle: fmt.Sprint("rh", i), ReceivedAt: t0, VisibilityTimeout: 3 * interval}, hbs[i], nil)
				}
			}
			attach()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if now.Sub(t0) > 11*time.Hour {
					b.StopTimer()
					attach()
					b.StartTimer()
				}
				now = now.Add(interval)
				for _, hb := range hbs {
					hb.Beat()
				}
				e.sweep(ctx, now)
			}
			b.StopTimer()
			if st := e.Stats(); st.Lost != 0 {
				b.Fatalf("%d leases lost", st.Lost)
			}
			b.ReportMetric(float64(mb.calls.Load())/float64(b.N), "calls/interval")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/lease")
		})
	}
}
