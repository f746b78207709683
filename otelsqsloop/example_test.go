package otelsqsloop_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/otelsqsloop"
)

// A consumer reporting to OpenTelemetry: spans and metrics go to the
// global providers unless Config names others; a producer injects the
// creation context its consumer links to.
func Example() {
	broker := new(memmailbox.Broker)
	defer broker.Close()
	q, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		log.Fatal(err)
	}
	obs, err := otelsqsloop.New(otelsqsloop.Config{Queue: "jobs"})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	msg := sqsloop.OutgoingMessage{Body: "hello"}
	obs.InjectMessage(ctx, &msg) // a producer's hook: writes traceparent when ctx has a span
	if _, err := q.Send(ctx, []sqsloop.OutgoingMessage{msg}); err != nil {
		log.Fatal(err)
	}
	handled := make(chan struct{})
	c, err := consumer.New(q, func(ctx context.Context, m *sqsloop.Message) error {
		fmt.Println("processing", m.Body) // ctx carries the process span
		close(handled)
		return nil
	}, consumer.Config{Observer: obs, WaitTime: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-handled
	if err := c.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("run:", <-done)
	// Output:
	// processing hello
	// run: <nil>
}
