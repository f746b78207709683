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

// Using the Manager without the consumer (as a Lambda handler would, for
// the receipt handles of its batch): hold each received message with its
// handler's heartbeat, beat while working (the Manager extends the lease
// every Interval while beats come), and decide: Ack, Nack or GiveBack. The
// Manager sends the decisions, batched, and Run sends what is decided
// before it returns.
func ExampleManager() {
	ctx := context.Background()
	broker := memmailbox.NewBroker()
	defer broker.Close()
	q, _ := broker.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
	q.Send(ctx, []sqsloop.OutgoingMessage{{Body: "ok"}, {Body: "fails"}})

	m, err := visibility.New(q, visibility.Config{Interval: 10 * time.Second, Extension: time.Minute}, nil)
	if err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- m.Run(runCtx) }()

	msgs, _ := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 2, VisibilityTimeout: 30 * time.Second})
	for _, msg := range msgs {
		hb := heartbeat.New()
		lease := m.Hold(msg, hb, nil)
		hb.Beat() // ... work, beating as it goes ...
		if msg.Body == "ok" {
			lease.Ack()
		} else {
			lease.Nack(5 * time.Second) // visible again in 5 s
		}
	}
	stop()
	<-done
	st := m.Stats()
	fmt.Println("acked:", st.Acked, "nacked:", st.Nacked)
	// Output:
	// acked: 1 nacked: 1
}

func ExampleConfig_Validate() {
	err := visibility.Config{Interval: 3 * time.Minute, Extension: 5 * time.Minute}.Validate()
	fmt.Println(err)
	fmt.Println(errors.Is(err, sqsloop.ErrInvalidArgument))
	// Output:
	// Interval: must be less than Extension/2 (2m30s), got 3m0s: sqsloop: invalid argument
	// true
}
