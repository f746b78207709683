package otelsqsloop_test

import (
	"context"
	"log"
	"time"

	"github.com/sqsloop/sqsloop/otelsqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// A store of leases wired to OpenTelemetry: the sweeper counts what it
// recovers, and the gauges read the store's figures at each collection.
// st is a sqlmailbox Store (sqlite.Open, postgres.New); one process
// (here, the one that sweeps) reports the gauges for every queue.
func ExampleLeaseMetrics() {
	var st *sqlmailbox.Store // from sqlite.Open or postgres.New
	queues := []string{"jobs", "mail"}
	lm, err := otelsqsloop.NewLeaseMetrics(nil, func(ctx context.Context) ([]otelsqsloop.QueueLeases, error) {
		var out []otelsqsloop.QueueLeases
		for _, q := range queues {
			s, err := st.LeaseStats(ctx, q, time.Now())
			if err != nil {
				return nil, err
			}
			out = append(out, otelsqsloop.QueueLeases{Queue: q, InFlight: s.InFlight, PastDeadline: s.PastDeadline})
		}
		return out, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	defer lm.Close()
	sweeper := st.Sweeper(time.Minute, func(s sqlmailbox.SweepStats, err error) {
		for _, q := range s.ByQueue {
			lm.Swept(context.Background(), q.Queue, q.Recovered, q.Failed)
		}
	})
	_ = sweeper // run it: lifecycle.LoopGroup, or go sweeper.Run(ctx)
}
