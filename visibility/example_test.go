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

// Using the Manager without the consumer: hold a received message with its
// handler's heartbeat, beat while working, and decide: Ack (or Nack, or
// GiveBack). The Manager sends the delete, batched with other acks.
func ExampleManager() {
	ctx := context.Background()
	broker := memmailbox.NewBroker()
	defer broker.Close()
	q, _ := broker.CreateQueue("jobs", memmailbox.QueueConfig{})
	q.Send(ctx, []sqsloop.OutgoingMessage{{Body: "job"}})

	m, err := visibility.New(q, visibility.Config{Interval: 100 * time.Millisecond, Extension: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- m.Run(runCtx) }()

	msgs, _ := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Second})
	hb := heartbeat.New()
	lease := m.Hold(msgs[0], hb, nil)
	for range 3 { // 300 ms of work, beating as it goes
		hb.Beat()
		time.Sleep(100 * time.Millisecond)
	}
	lease.Ack()
	stop() // Run sends the decided ack before it returns
	<-done
	st := m.Stats()
	fmt.Println("extended:", st.Extended > 0)
	fmt.Println("acked:", st.Acked)
	// Output:
	// extended: true
	// acked: 1
}

func ExampleConfig_Validate() {
	err := visibility.Config{Interval: 3 * time.Minute, Extension: 5 * time.Minute}.Validate()
	fmt.Println(err)
	fmt.Println(errors.Is(err, sqsloop.ErrInvalidArgument))
	// Output:
	// Interval: must be less than Extension/2 (2m30s), got 3m0s: sqsloop: invalid argument
	// true
}
