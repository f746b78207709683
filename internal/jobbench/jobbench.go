// Package jobbench measures what the middlewares on a jobstate.Store
// (packages checkpoint and idempotency) add to one message's handling, on
// any store: each store's test package runs Benchmark on its own store
// (BenchmarkMemory, BenchmarkSQLite, BenchmarkPostgreSQL,
// BenchmarkDynamoDB), so that the public conformance kit
// (jobstate/storetest) imports only what it tests. Imported only by tests.
package jobbench

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/jobstate"
)

// counting is a Store that counts the calls made to it.
type counting struct {
	jobstate.Store
	calls atomic.Int64
}

func (c *counting) Get(ctx context.Context, key string) (jobstate.Record, error) {
	c.calls.Add(1)
	return c.Store.Get(ctx, key)
}

func (c *counting) Put(ctx context.Context, rec jobstate.Record) error {
	c.calls.Add(1)
	return c.Store.Put(ctx, rec)
}

func (c *counting) Claim(ctx context.Context, rec jobstate.Record) (jobstate.Record, error) {
	c.calls.Add(1)
	return c.Store.Claim(ctx, rec)
}

func (c *counting) Delete(ctx context.Context, key, owner string) error {
	c.calls.Add(1)
	return c.Store.Delete(ctx, key, owner)
}

// Benchmark measures what the middlewares add to one message's handling on
// s: sub-benchmarks, each a message per iteration through its middleware
// to a handler that does nothing else, report the store calls per message
// (calls/msg) and the handling's latency percentiles (p50-µs, p99-µs):
//
//   - none: no middleware, the baseline;
//   - idempotency: a new key (claim, then completion);
//   - idempotency-duplicate: a completed key (a refused claim);
//   - checkpoint-first: a first delivery that saves one checkpoint and is
//     acked (save, then the mark of the job done);
//   - checkpoint-resumed: a redelivery that loads a checkpoint, saves one
//     and is acked (read, save, mark).
//
// The keys are new in every run, so that a database may be shared.
func Benchmark(b *testing.B, s jobstate.Store) {
	run := fmt.Sprint(time.Now().UnixNano())
	cs := &counting{Store: s}
	idem, err := idempotency.New(cs, idempotency.Config{Queue: "bench-" + run})
	if err != nil {
		b.Fatal(err)
	}
	cp, err := checkpoint.New(cs, checkpoint.Config{Queue: "bench-" + run})
	if err != nil {
		b.Fatal(err)
	}
	nop := func(context.Context, *sqsloop.Message) error { return nil }
	save := func(ctx context.Context, m *sqsloop.Message) error {
		if _, _, err := checkpoint.Load(ctx); err != nil {
			return err
		}
		return checkpoint.Save(ctx, []byte("step 7 of 20, hash state ..."))
	}
	for _, bm := range []struct {
		name    string
		handler func(context.Context, *sqsloop.Message) error
		msg     func(i int) *sqsloop.Message
		prepare func(b *testing.B, m *sqsloop.Message)
	}{
		{"none", nop, func(i int) *sqsloop.Message { return &sqsloop.Message{ID: fmt.Sprint(i), ReceiveCount: 1} }, nil},
		{"idempotency", idem.Middleware(nop), func(i int) *sqsloop.Message {
			return &sqsloop.Message{ID: fmt.Sprint("new-", i), ReceiveCount: 1, VisibilityTimeout: 30 * time.Second}
		}, nil},
		{"idempotency-duplicate", idem.Middleware(nop), func(int) *sqsloop.Message {
			return &sqsloop.Message{ID: "dup", ReceiveCount: 2, VisibilityTimeout: 30 * time.Second}
		}, func(b *testing.B, m *sqsloop.Message) {
			if err := idem.Middleware(nop)(heartbeat.NewContext(b.Context(), heartbeat.New()), m); err != nil {
				b.Fatal(err)
			}
		}},
		{"checkpoint-first", cp.Middleware(save), func(i int) *sqsloop.Message {
			return &sqsloop.Message{ID: fmt.Sprint("first-", i), ReceiveCount: 1}
		}, nil},
		{"checkpoint-resumed", cp.Middleware(save), func(i int) *sqsloop.Message {
			return &sqsloop.Message{ID: fmt.Sprint("again-", i), ReceiveCount: 2}
		}, nil},
	} {
		b.Run(bm.name, func(b *testing.B) {
			ctx := heartbeat.NewContext(b.Context(), heartbeat.New())
			if bm.prepare != nil {
				bm.prepare(b, bm.msg(0))
			}
			var lat []time.Duration
			cs.calls.Store(0)
			i := 0
			for b.Loop() {
				m := bm.msg(i)
				i++
				if bm.name == "checkpoint-resumed" {
					b.StopTimer()
					if err := s.Put(ctx, jobstate.Record{Key: "checkpoint/bench-" + run + "/" + m.ID, State: jobstate.Saved, Value: []byte("step 6")}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				start := time.Now()
				if err := bm.handler(ctx, m); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(cs.calls.Load())/float64(len(lat)), "calls/msg")
			b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Microsecond), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100])/float64(time.Microsecond), "p99-µs")
		})
	}
}
