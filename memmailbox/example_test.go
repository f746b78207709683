package memmailbox_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// Send a message, receive it (it is then in flight, hidden from other
// receives), and ack it.
func Example() {
	ctx := context.Background()
	broker := new(memmailbox.Broker)
	defer broker.Close()

	q, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "orders"})
	if err != nil {
		panic(err)
	}
	if _, err := q.Send(ctx, []sqsloop.OutgoingMessage{{Body: "order #1"}}); err != nil {
		panic(err)
	}

	msgs, err := q.Receive(ctx, sqsloop.ReceiveRequest{
		MaxMessages:       10,
		VisibilityTimeout: 30 * time.Second,
		WaitTime:          20 * time.Second, // long polling: returns as soon as a message is visible
	})
	if err != nil {
		panic(err)
	}
	for _, m := range msgs {
		fmt.Printf("received %q, receive count %d\n", m.Body, m.ReceiveCount)
		if _, err := q.Delete(ctx, []string{m.ReceiptHandle}); err != nil {
			panic(err)
		}
	}
	st := q.Stats()
	fmt.Printf("visible %d, in flight %d, deleted %d\n", st.Visible, st.InFlight, st.Deleted)
	// Output:
	// received "order #1", receive count 1
	// visible 0, in flight 0, deleted 1
}

// A message that keeps failing goes to the dead-letter queue after
// MaxReceiveCount receives.
func ExampleBroker_CreateQueue_redrive() {
	ctx := context.Background()
	broker := new(memmailbox.Broker)
	defer broker.Close()

	// The dead-letter queue "orders-dlq" and the redrive policy come with it.
	q, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "orders", MaxReceiveCount: 2})
	if err != nil {
		panic(err)
	}
	dlq, err := q.OpenDeadLetterQueue(ctx)
	if err != nil {
		panic(err)
	}
	_, _ = q.Send(ctx, []sqsloop.OutgoingMessage{{Body: "poison"}})

	req := sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Minute}
	for range 3 {
		msgs, _ := q.Receive(ctx, req)
		for _, m := range msgs {
			fmt.Printf("attempt %d fails\n", m.ReceiveCount)
			// visible again at once (a nack)
			_, _ = q.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: m.ReceiptHandle}})
		}
	}
	dead, _ := dlq.Receive(ctx, req)
	fmt.Printf("DLQ holds %q; moved %d\n", dead[0].Body, q.Stats().DeadLettered)
	// Output:
	// attempt 1 fails
	// attempt 2 fails
	// DLQ holds "poison"; moved 1
}

// A FIFO queue keeps order within a message group and delivers nothing more
// of a group while one of its messages is in flight.
func ExampleQueue_Receive_fifo() {
	ctx := context.Background()
	broker := new(memmailbox.Broker)
	defer broker.Close()

	q, _ := broker.CreateQueue(sqsloop.QueueSpec{Name: "payments.fifo", FIFO: true, ContentBasedDeduplication: true})
	_, _ = q.Send(ctx, []sqsloop.OutgoingMessage{
		{Body: "alice: debit", MessageGroupID: "alice"},
		{Body: "alice: credit", MessageGroupID: "alice"},
		{Body: "bob: debit", MessageGroupID: "bob"},
	})
	req := sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Minute}
	first, _ := q.Receive(ctx, req)
	second, _ := q.Receive(ctx, req) // alice is in flight: bob's turn
	fmt.Println(first[0].Body, "|", second[0].Body)
	_, _ = q.Delete(ctx, []string{first[0].ReceiptHandle})
	third, _ := q.Receive(ctx, req)
	fmt.Println(third[0].Body)
	// Output:
	// alice: debit | bob: debit
	// alice: credit
}
