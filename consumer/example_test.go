package consumer_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// A consumer with a handler that beats while it works, on the in-memory
// mailbox. Swap the queue for an sqsmailbox.Mailbox to consume real SQS.
func Example() {
	ctx := context.Background()
	broker := new(memmailbox.Broker)
	defer broker.Close()
	queue, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := queue.Send(ctx, []sqsloop.OutgoingMessage{{Body: "alpha"}, {Body: "beta"}, {Body: "gamma"}}); err != nil {
		log.Fatal(err)
	}

	var jobs sync.WaitGroup
	jobs.Add(3)
	handler := func(ctx context.Context, m *sqsloop.Message) error {
		defer jobs.Done()
		var out strings.Builder
		for _, r := range m.Body {
			out.WriteRune(r - 'a' + 'A') // the work, a step at a time...
			heartbeat.Beat(ctx)          // ...proving progress: the lease is extended only while beats come
		}
		fmt.Println(out.String())
		return nil // nil acks; an error nacks with the retry back-off
	}

	c, err := consumer.New(queue, handler, consumer.Config{Concurrency: 1})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		jobs.Wait()
		c.Shutdown(ctx) // what SIGTERM does through lifecycle: drain, then return
	}()
	if err := c.Run(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("acked:", c.Stats().Acked)
	// Output:
	// ALPHA
	// BETA
	// GAMMA
	// acked: 3
}
