package postgres_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/producer"
)

// BenchmarkReceive measures one Receive of 10 messages from a queue of
// 1,000 (each op then deletes them and sends 10 more, off the clock), and
// one Receive that finds nothing (WaitTime 0: one look at the database), on
// the server PG_DSN names.
func BenchmarkReceive(b *testing.B) {
	ctx := b.Context()
	h := sqlharness.NewPostgres(b)
	for _, fifo := range []bool{false, true} {
		q, cleanup := h.NewQueue(ctx, b, mailboxtest.QueueOptions{FIFO: fifo})
		defer cleanup()
		out := make([]sqsloop.OutgoingMessage, 10)
		refill := func() {
			for i := range out {
				body := fmt.Sprint("job-", time.Now().UnixNano(), "-", i)
				out[i] = sqsloop.OutgoingMessage{Body: body}
				if fifo {
					out[i].MessageGroupID, out[i].DeduplicationID = fmt.Sprint("g", i), body
				}
			}
			mailboxtest.SendAll(ctx, b, q.Mailbox, out...)
		}
		for range 100 {
			refill()
		}
		req := sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute}
		kind := map[bool]string{false: "standard", true: "FIFO"}[fifo]
		b.Run("10 of 1000 "+kind, func(b *testing.B) {
			for b.Loop() {
				msgs, err := q.Mailbox.Receive(ctx, req)
				if err != nil || len(msgs) != 10 {
					b.Fatalf("Receive: %d messages, %v", len(msgs), err)
				}
				b.StopTimer()
				mailboxtest.AckAll(ctx, b, q.Mailbox, msgs...)
				refill()
				b.StartTimer()
			}
		})
	}
	q, cleanup := h.NewQueue(ctx, b, mailboxtest.QueueOptions{})
	defer cleanup()
	b.Run("empty", func(b *testing.B) {
		for b.Loop() {
			if msgs, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute}); err != nil || len(msgs) != 0 {
				b.Fatalf("Receive: %d messages, %v", len(msgs), err)
			}
		}
	})
}

// BenchmarkSendParallel measures Sends of one message each from 16
// goroutines at once into one queue, the case where a NOTIFY per send
// would wake every listener and serialize the commits on NOTIFY's lock;
// it reports sends/s. A Store listens meanwhile (a long poll started it),
// as a worker process's does.
func BenchmarkSendParallel(b *testing.B) {
	ctx := b.Context()
	h := sqlharness.NewPostgres(b)
	q, cleanup := h.NewQueue(ctx, b, mailboxtest.QueueOptions{})
	defer cleanup()
	if _, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Minute}); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		out := []sqsloop.OutgoingMessage{{Body: "job"}}
		for pb.Next() {
			if res, err := q.Mailbox.Send(ctx, out); err != nil || res[0].Err != nil {
				b.Errorf("Send: %v %v", res, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sends/s")
}

// BenchmarkProducer measures what 16 senders get through one
// producer.Producer (its defaults) into one queue, in messages committed a
// second: each sender a SendAll of 128 messages of 256 bytes at a time
// (the public job-queue benchmark's producer batches), or a Send of one at
// a time. Run it against a server with fsync on (PG_FSYNC=on): a commit's
// flush is what the sends wait for.
func BenchmarkProducer(b *testing.B) {
	ctx := b.Context()
	h := sqlharness.NewPostgres(b)
	body := strings.Repeat("x", 256)
	for _, each := range []int{128, 1} {
		b.Run(fmt.Sprintf("16 senders of %d", each), func(b *testing.B) {
			q, cleanup := h.NewQueue(ctx, b, mailboxtest.QueueOptions{})
			defer cleanup()
			p, err := producer.New(q.Mailbox, producer.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(ctx)
			msgs := make([]sqsloop.OutgoingMessage, each)
			for i := range msgs {
				msgs[i].Body = body
			}
			var sent atomic.Int64
			start := time.Now()
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for sent.Add(int64(each)) <= int64(b.N) {
						if _, err := p.SendAll(ctx, msgs); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sends/s")
		})
	}
	// The floor beside it, in the same run: each sender stores its 128
	// rows in the queue's table with a COPY of its own (one commit each;
	// pgx's binary COPY, no array to parse), the fastest way a hand-written
	// sender has to put those rows, their two indexes and their foreign key
	// on the disk. It keeps none of a send's promises (a message ID made
	// by the server's rule, the size and character checks, the wake-up of
	// the long polls).
	b.Run("16 senders of 128, bare COPY (the floor)", func(b *testing.B) {
		name := sqlharness.QueueName(b)
		if _, err := h.Store().CreateQueue(ctx, sqsloop.QueueSpec{Name: name}); err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := h.Store().DeleteQueue(context.WithoutCancel(ctx), name); err != nil {
				b.Log(err)
			}
		}()
		pool, err := pgxpool.New(ctx, sqlharness.PGDSN(b))
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		var id int64
		if err := pool.QueryRow(ctx, `SELECT id FROM sqsloop_queues WHERE name = $1`, name).Scan(&id); err != nil {
			b.Fatal(err)
		}
		cols := []string{"queue_id", "message_id", "body", "sent_at", "visible_at"}
		var sent atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				rows := make([][]any, 128)
				for sent.Add(128) <= int64(b.N) {
					now := time.Now()
					for i := range rows {
						rows[i] = []any{id, fmt.Sprint(now.UnixNano(), "-", i), body, now, now}
					}
					if _, err := pool.CopyFrom(ctx, pgx.Identifier{"sqsloop_messages"}, cols, pgx.CopyFromRows(rows)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sends/s")
	})
}
