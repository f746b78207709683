package jobbench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/jobstate"
)

// Takes measures what a rate limit costs a message on l: one take per
// message (consumer.Config.RateLimits), and a pause per SlowDown. Its
// sub-benchmarks report the latency percentiles (p50-µs, p99-µs) of:
//
//   - take: a take of a busy key that reserves its turn (the common case
//     under a limit: the turn is ahead, the take is granted);
//   - take-refused: a take whose turn is further off than it may wait;
//   - pause: a pause of a key (a handler's sqsloop.SlowDown).
//
// Each is one statement or request (DynamoDB: one while the key stays
// busy). The keys are new in every run, so that a database may be shared.
func Takes(b *testing.B, l jobstate.RateLimiter) {
	run := fmt.Sprint(time.Now().UnixNano())
	busy := jobstate.Rate{Interval: time.Microsecond, Burst: 1}
	slow := jobstate.Rate{Interval: time.Hour, Burst: 1}
	for _, bm := range []struct {
		name string
		op   func(b *testing.B, i int) error
	}{
		{"take", func(b *testing.B, _ int) error {
			_, err := l.Take(b.Context(), "bench-take-"+run, busy, jobstate.MaxRateWait)
			return err
		}},
		{"take-refused", func(b *testing.B, _ int) error {
			g, err := l.Take(b.Context(), "bench-refused-"+run, slow, 0)
			if err == nil && g.OK && g.Wait == 0 {
				return nil // the first take of the key
			}
			if err == nil && g.OK {
				err = fmt.Errorf("a take of a key an hour busy was granted")
			}
			return err
		}},
		{"pause", func(b *testing.B, i int) error {
			return l.Pause(b.Context(), fmt.Sprint("bench-pause-", run, "-", i%100), slow, time.Now().Add(time.Minute))
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				if err := bm.op(b, i); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				i++
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Microsecond), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100])/float64(time.Microsecond), "p99-µs")
		})
	}
}
