package idempotency_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// Two messages about one order (a producer that sent twice): keyed by the
// order ID in the body, the order is charged once; the second delivery is
// acked without running the handler.
func Example() {
	b := new(memmailbox.Broker)
	defer b.Close()
	queue, _ := b.CreateQueue(sqsloop.QueueSpec{Name: "orders"})
	_, _ = queue.Send(context.Background(), []sqsloop.OutgoingMessage{{Body: "order-7"}, {Body: "order-7"}})

	idem, err := idempotency.New(&jobstate.Memory{}, idempotency.Config{ // on a fleet: dynamostore, pgstate
		Queue: "orders",
		Key:   func(m *sqsloop.Message) (string, error) { return m.Body, nil },
	})
	if err != nil {
		panic(err)
	}
	handler := func(ctx context.Context, m *sqsloop.Message) error {
		fmt.Println("charging", m.Body)
		return idempotency.SetResult(ctx, []byte("charge ch_1"))
	}
	c, err := consumer.New(queue, handler, consumer.Config{
		Concurrency: 1, // one after the other: with more, the second would find the first in progress and wait for its lease
		WaitTime:    time.Second,
		Middleware:  []sqsloop.Middleware{idem.Middleware}, // first: a duplicate costs nothing else
	})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		for idem.Stats().Completed+idem.Stats().Duplicates < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		stop()
	}()
	if err := c.Run(ctx); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", idem.Stats())
	// Output:
	// charging order-7
	// {Ran:1 Completed:1 Duplicates:1 Busy:0 LostClaims:0 StoreErrors:0}
}
