package sqslambda

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// bigBatch is a standard queue's largest batch: 10,000 records.
func bigBatch() events.SQSEvent {
	var ev events.SQSEvent
	for i := range 10_000 {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: fmt.Sprint("id-", i), ReceiptHandle: fmt.Sprint("rh-", i), Body: "ok",
			Attributes:     map[string]string{sqsloop.AttrApproximateReceiveCount: "1"},
			EventSourceARN: testARN,
		})
	}
	return ev
}

// BenchmarkHandle measures one invocation of a standard queue's largest
// batch, 10,000 records of a no-op handler, with Concurrency 10: without a
// client, and with one (a memmailbox queue: the lease owner holds and
// releases every record's lease); and with an Observer that does nothing
// (sqsloop.NopObserver: what reporting the runs costs, besides what an
// observer does). Reported per record. BenchmarkHandRolled
// is what users write today, side by side: a loop over the records with a
// recover, one at a time.
func BenchmarkHandle(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		withClient bool
		observer   string
	}{{false, "none"}, {true, "none"}, {false, "nop"}, {true, "nop"}} {
		withClient := c.withClient
		b.Run(fmt.Sprintf("client=%v/observer=%s", withClient, c.observer), func(b *testing.B) {
			ev := bigBatch()
			cfg := Config{Logger: quiet}
			if c.observer == "nop" {
				cfg.Observer = sqsloop.NopObserver{}
			}
			if withClient {
				broker := new(memmailbox.Broker)
				defer broker.Close()
				q, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: time.Minute})
				if err != nil {
					b.Fatal(err)
				}
				cfg.OpenQueue = func(string) (Queue, error) { return q, nil }
			}
			h, err := New(noopHandler, cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if resp, err := h.Handle(ctx, ev); err != nil || len(resp.BatchItemFailures) != 0 {
					b.Fatal(resp, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ev.Records)), "ns/record")
		})
	}
}

func BenchmarkHandRolled(b *testing.B) {
	ev := bigBatch()
	ctx := context.Background()
	run := func(r *events.SQSMessage) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panic: %v", v)
			}
		}()
		return noopHandler(ctx, &sqsloop.Message{ID: r.MessageId, Body: r.Body, ReceiptHandle: r.ReceiptHandle, Attributes: r.Attributes})
	}
	b.ReportAllocs()
	for b.Loop() {
		var resp events.SQSEventResponse
		for i := range ev.Records {
			if err := run(&ev.Records[i]); err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
			}
		}
		if len(resp.BatchItemFailures) != 0 {
			b.Fatal(resp)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ev.Records)), "ns/record")
}

// noopHandler is called through a variable, as a user's handler is: the
// compiler cannot inline it or keep its Message on the stack.
var noopHandler = func(context.Context, *sqsloop.Message) error { return nil }
