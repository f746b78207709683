package memmailbox_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// refill sends batches of 10 until q has at least n visible messages.
func refill(b *testing.B, q *memmailbox.Queue, n int) {
	b.Helper()
	batch := bodies("0123456789", "0123456789", "0123456789", "0123456789", "0123456789",
		"0123456789", "0123456789", "0123456789", "0123456789", "0123456789")
	for have := q.Stats().Visible; have < n; have += len(batch) {
		if _, err := q.Send(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}

// receiveDelete receives 10 messages and acks them in one batch.
func receiveDelete(b *testing.B, q *memmailbox.Queue, handles []string) {
	ctx := context.Background()
	msgs, err := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Hour})
	if err != nil || len(msgs) != 10 {
		b.Fatalf("Receive: %d messages, %v", len(msgs), err)
	}
	for i, m := range msgs {
		handles[i] = m.ReceiptHandle
	}
	if _, err := q.Delete(ctx, handles[:len(msgs)]); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReceiveDelete is the consumer's steady state: receive 10, ack the
// batch. One op is one receive plus one delete batch (10 messages).
func BenchmarkReceiveDelete(b *testing.B) {
	_, q := newQueue(b, sqsloop.QueueSpec{Name: "bench"})
	const stock = 10_000
	refill(b, q, stock)
	handles := make([]string, 10)
	b.ReportAllocs()
	for b.Loop() {
		if q.Stats().Visible < 10 {
			b.StopTimer()
			refill(b, q, stock)
			b.StartTimer()
		}
		receiveDelete(b, q, handles)
	}
}

// BenchmarkReceiveWithManyInFlight shows that the cost of a receive does not
// grow with the number of messages in flight: compare inflight=200 with
// inflight=20000.
func BenchmarkReceiveWithManyInFlight(b *testing.B) {
	for _, inFlight := range []int{200, 20_000} {
		b.Run("inflight="+strconv.Itoa(inFlight), func(b *testing.B) {
			_, q := newQueue(b, sqsloop.QueueSpec{Name: "bench"})
			refill(b, q, inFlight)
			for q.Stats().InFlight < inFlight {
				if _, err := q.Receive(context.Background(), sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: 12 * time.Hour}); err != nil {
					b.Fatal(err)
				}
			}
			const stock = 10_000
			refill(b, q, stock)
			handles := make([]string, 10)
			b.ReportAllocs()
			for b.Loop() {
				if q.Stats().Visible < 10 {
					b.StopTimer()
					refill(b, q, stock)
					b.StartTimer()
				}
				receiveDelete(b, q, handles)
			}
			if st := q.Stats(); st.InFlight != inFlight {
				b.Fatalf("in flight %d, want %d", st.InFlight, inFlight)
			}
		})
	}
}

// BenchmarkSend is one SendMessageBatch of 10 small messages.
func BenchmarkSend(b *testing.B) {
	_, q := newQueue(b, sqsloop.QueueSpec{Name: "bench"})
	batch := bodies("0123456789", "0123456789", "0123456789", "0123456789", "0123456789",
		"0123456789", "0123456789", "0123456789", "0123456789", "0123456789")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := q.Send(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReceiveDeleteParallel runs receive + ack from GOMAXPROCS
// goroutines on one queue, as a consumer's pollers do.
func BenchmarkReceiveDeleteParallel(b *testing.B) {
	_, q := newQueue(b, sqsloop.QueueSpec{Name: "bench"})
	batch := bodies("0123456789", "0123456789", "0123456789", "0123456789", "0123456789",
		"0123456789", "0123456789", "0123456789", "0123456789", "0123456789")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		handles := make([]string, 10)
		for pb.Next() {
			if _, err := q.Send(ctx, batch); err != nil {
				b.Fatal(err)
			}
			msgs, err := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			if len(msgs) == 0 {
				continue
			}
			for i, m := range msgs {
				handles[i] = m.ReceiptHandle
			}
			if _, err := q.Delete(ctx, handles[:len(msgs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
