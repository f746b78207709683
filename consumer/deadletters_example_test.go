package consumer_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// A runtime that runs handlers outside a Consumer (as package sqslambda
// does on Lambda) moves a poison message with DeadLetters: the copy first,
// and only once the dead-letter queue has it, the delete of the original.
func ExampleDeadLetters() {
	ctx := context.Background()
	broker := memmailbox.NewBroker()
	defer broker.Close()
	queue, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "orders", MaxReceiveCount: 5}) // and "orders-dlq"
	if err != nil {
		log.Fatal(err)
	}
	if _, err := queue.Send(ctx, []sqsloop.OutgoingMessage{{Body: "order 17"}}); err != nil {
		log.Fatal(err)
	}
	msgs, err := queue.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	m := msgs[0]
	dead := consumer.NewDeadLetters(queue)
	if err := dead.Copy(ctx, m, consumer.Permanent(errors.New("order 17 does not exist"))); err != nil {
		log.Fatal(err) // not copied: leave the message to be retried
	}
	if _, err := queue.Delete(ctx, []string{m.ReceiptHandle}); err != nil {
		log.Fatal(err)
	}

	copies, err := broker.Queue("orders-dlq").Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	a := copies[0].MessageAttributes
	fmt.Println(copies[0].Body)
	fmt.Println(a[consumer.AttrPoisonReason].StringValue)
	fmt.Println("receive count:", a[consumer.AttrPoisonReceiveCount].StringValue)
	// Output:
	// order 17
	// permanent failure: order 17 does not exist
	// receive count: 1
}
