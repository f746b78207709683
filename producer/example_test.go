package producer_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/producer"
)

// Sending many messages: SendAll puts them in SendMessageBatch calls of
// up to 10 (3 calls for 25 messages) and returns each one's result.
func Example() {
	ctx := context.Background()
	broker := new(memmailbox.Broker)
	defer broker.Close()
	queue, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		panic(err)
	}

	p, err := producer.New(queue, producer.Config{})
	if err != nil {
		panic(err)
	}
	defer p.Close(ctx) // sends what is pending, reports what it could not

	msgs := make([]sqsloop.OutgoingMessage, 25)
	for i := range msgs {
		msgs[i] = sqsloop.OutgoingMessage{Body: fmt.Sprint("job ", i)}
	}
	results, err := p.SendAll(ctx, msgs)
	var failed *producer.BatchError
	if errors.As(err, &failed) {
		fmt.Println(failed.Failed, "not sent") // failed.Errs[i] is message i's error
	}
	// p.Stats().Calls: 3, unless a 5 ms linger ran out between two messages
	fmt.Printf("sent %d; queue holds %d\n", len(results), queue.Stats().Visible)
	// Output:
	// sent 25; queue holds 25
}

// Send from many goroutines, each sending one (a server's request
// handlers): the producer puts their messages in shared SendMessageBatch
// calls, and each Send gets its own result. (In a loop in one goroutine,
// Send makes one call per message: use SendAll.)
func ExampleProducer_Send() {
	ctx := context.Background()
	broker := new(memmailbox.Broker)
	defer broker.Close()
	queue, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		panic(err)
	}

	p, err := producer.New(queue, producer.Config{})
	if err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: fmt.Sprint("job ", i)}); err != nil {
				fmt.Println("not sent:", err) // every failure is reported to its Send
			}
		})
	}
	wg.Wait()
	if err := p.Close(ctx); err != nil { // sends what is pending, reports what it could not
		panic(err)
	}
	st := p.Stats() // st.Calls: 2, unless the 5 ms linger ran out first
	fmt.Printf("sent %d; queue holds %d\n", st.Sent, queue.Stats().Visible)
	// Output:
	// sent 20; queue holds 20
}

// A typed body: the value is encoded as JSON; consumer.JSONHandler decodes
// it into the same type on the receiving side.
func ExampleProducer_SendJSON() {
	ctx := context.Background()
	broker := new(memmailbox.Broker)
	defer broker.Close()
	queue, _ := broker.CreateQueue(sqsloop.QueueSpec{Name: "resize"})
	p, _ := producer.New(queue, producer.Config{})
	defer p.Close(ctx)

	type Resize struct {
		Image string `json:"image"`
		Width int    `json:"width"`
	}
	if _, err := p.SendJSON(ctx, Resize{Image: "cat.png", Width: 640}, sqsloop.OutgoingMessage{}); err != nil {
		panic(err)
	}
	msgs, _ := queue.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1})
	fmt.Println(msgs[0].Body)
	// Output:
	// {"image":"cat.png","width":640}
}

// Many typed bodies at once: SendAllJSON encodes each value as JSON and
// sends them as SendAll does.
func ExampleSendAllJSON() {
	ctx := context.Background()
	broker := new(memmailbox.Broker)
	defer broker.Close()
	queue, _ := broker.CreateQueue(sqsloop.QueueSpec{Name: "resize"})
	p, _ := producer.New(queue, producer.Config{})
	defer p.Close(ctx)

	type Resize struct {
		Image string `json:"image"`
		Width int    `json:"width"`
	}
	jobs := []Resize{{"cat.png", 640}, {"dog.png", 320}}
	if _, err := producer.SendAllJSON(ctx, p, jobs, sqsloop.OutgoingMessage{}); err != nil {
		panic(err)
	}
	msgs, _ := queue.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 2})
	for _, m := range msgs {
		fmt.Println(m.Body)
	}
	// Output:
	// {"image":"cat.png","width":640}
	// {"image":"dog.png","width":320}
}
