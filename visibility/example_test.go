package visibility_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

// Using the extender without the consumer: attach a received message with
// its handler's heartbeat, beat while working, detach before acking.
func ExampleExtender() {
	ctx := context.Background()
	broker := memmailbox.NewBroker()
	defer broker.Close()
	q, _ := broker.CreateQueue("jobs", memmailbox.QueueConfig{})
	q.Send(ctx, []sqsloop.OutgoingMessage{{Body: "job"}})

	ext, err := visibility.New(q, visibility.Config{Interval: 100 * time.Millisecond, Extension: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- ext.Run(runCtx) }()

	msgs, _ := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Second})
	hb := heartbeat.New()
	lease := ext.Attach(msgs[0], hb, nil)
	for range 15 { // 1.5 s of work, longer than the 1 s visibility timeout
		time.Sleep(100 * time.Millisecond)
		hb.Beat()
	}
	if err := ext.Detach(lease); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ack:", msgs[0].Ack(ctx))
	stop()
	<-done
	fmt.Println("extended:", ext.Stats().Extended > 0)
	// Output:
	// ack: <nil>
	// extended: true
}

func ExampleConfig_Validate() {
	err := visibility.Config{Interval: 3 * time.Minute, Extension: 5 * time.Minute}.Validate()
	fmt.Println(err)
	fmt.Println(errors.Is(err, sqsloop.ErrInvalidArgument))
	// Output:
	// Interval: must be less than Extension/2 (2m30s), got 3m0s: sqsloop: invalid argument
	// true
}
