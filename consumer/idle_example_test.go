package consumer_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// A batch job (a Kubernetes CronJob, an ECS task per backlog, a CI step):
// Run works through the backlog and returns nil on its own once the queue
// has been empty, with nothing in flight, for ExitWhenIdle.
func ExampleConfig_exitWhenIdle() {
	ctx := context.Background()
	broker := new(memmailbox.Broker)
	defer broker.Close()
	queue, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "backlog"})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 25 {
		if _, err := queue.Send(ctx, []sqsloop.OutgoingMessage{{Body: fmt.Sprint("job ", i)}}); err != nil {
			log.Fatal(err)
		}
	}
	var done atomic.Int64
	c, err := consumer.New(queue, func(ctx context.Context, m *sqsloop.Message) error {
		done.Add(1)
		return nil
	}, consumer.Config{
		WaitTime:     time.Second,            // each empty long poll proves a second of empty queue
		ExitWhenIdle: 500 * time.Millisecond, // then Run returns
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	err = c.Run(ctx) // no Shutdown, no signal: it ends when the backlog is done
	fmt.Println("Run:", err, "- jobs done:", done.Load())
	// Output:
	// Run: <nil> - jobs done: 25
}
