package consumer

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// preload fills a fresh queue with n messages, outside the timer.
func preload(b *testing.B, n int) *memmailbox.Queue {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	broker := new(memmailbox.Broker)
	b.Cleanup(func() { broker.Close() })
	q, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	out := make([]sqsloop.OutgoingMessage, sqsloop.MaxBatchSize)
	for i := range out {
		out[i] = sqsloop.OutgoingMessage{Body: "payload"}
	}
	for sent := 0; sent < n; sent += len(out) {
		if _, err := q.Send(context.Background(), out[:min(len(out), n-sent)]); err != nil {
			b.Fatal(err)
		}
	}
	return q
}

func report(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkConsumer measures the consumer on memmailbox with a no-op
// handler: one op is one message received and handled (acks are batched,
// the last ones flushed by the drain after the timer stops).
func BenchmarkConsumer(b *testing.B) {
	st := consumeAll(b, nil).Stats()
	b.ReportMetric(float64(st.Received)/float64(st.ReceiveCalls), "msgs/receive")
	if st.Acked != int64(b.N) {
		b.Fatalf("acked %d of %d", st.Acked, b.N)
	}
}

// consumeAll runs a consumer reporting to obs over b.N preloaded messages
// with a no-op handler, times it until the last handler ran, drains it
// outside the timer, and reports msgs/s.
func consumeAll(b *testing.B, obs sqsloop.Observer) *Consumer {
	q := preload(b, b.N)
	b.ReportAllocs()
	var handled atomic.Int64
	all := make(chan struct{})
	c, err := New(q, func(context.Context, *sqsloop.Message) error {
		if handled.Add(1) == int64(b.N) {
			close(all)
		}
		return nil
	}, Config{Concurrency: 16, WaitTime: time.Second, Logger: quiet, Observer: obs})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	<-all
	b.StopTimer() // the drain (a long poll's grace) is not throughput
	if err := c.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	report(b)
	return c
}

// BenchmarkBareLoop is the floor the consumer is compared with: receive 10,
// delete them in one batch, on one goroutine, over the same mailbox.
func BenchmarkBareLoop(b *testing.B) {
	q := preload(b, b.N)
	b.ReportAllocs()
	ctx := context.Background()
	req := sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute}
	handles := make([]string, 0, sqsloop.MaxBatchSize)
	for done := 0; done < b.N; {
		msgs, err := q.Receive(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		handles = handles[:0]
		for _, m := range msgs {
			handles = append(handles, m.ReceiptHandle)
		}
		if _, err := q.Delete(ctx, handles); err != nil {
			b.Fatal(err)
		}
		done += len(msgs)
	}
	report(b)
}

// BenchmarkConsumerLimits is BenchmarkConsumer with limits that never
// make a message wait: GroupLimit over 1,000 groups (a message's group
// from a counter), and a rate limit of a million a second on a
// jobstate.Memory: what a gate costs per message when nothing is over a
// limit (a Memory take; no round trip).
func BenchmarkConsumerLimits(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"GroupLimit", Config{GroupLimit: 4, GroupOf: groupOfCounter}},
		{"RateLimit", Config{RateLimits: []RateLimit{{Name: "all", Rate: 1_000_000, Per: time.Second, Burst: 1_000_000}}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			q := preload(b, b.N)
			b.ReportAllocs()
			var handled atomic.Int64
			all := make(chan struct{})
			cfg := tc.cfg
			cfg.Concurrency, cfg.WaitTime, cfg.Logger = 16, time.Second, quiet
			c, err := New(q, func(context.Context, *sqsloop.Message) error {
				if handled.Add(1) == int64(b.N) {
					close(all)
				}
				return nil
			}, cfg)
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Run(context.Background()) }()
			<-all
			b.StopTimer()
			if err := c.Shutdown(context.Background()); err != nil {
				b.Fatal(err)
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			report(b)
			if st := c.Stats(); st.Waited != 0 || st.Deferred != 0 {
				b.Fatalf("%d waited, %d deferred: the limits made messages wait", st.Waited, st.Deferred)
			}
		})
	}
}

// groupOfCounter spreads messages over 1,000 groups.
var groupCounter atomic.Int64

func groupOfCounter(*sqsloop.Message) string {
	return strconv.Itoa(int(groupCounter.Add(1) % 1000))
}
