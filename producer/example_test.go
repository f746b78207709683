package producer_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/producer"
)

// Send from many goroutines: the producer puts the messages in
// SendMessageBatch calls of up to 10, and each Send gets its own result.
func Example() {
	ctx := context.Background()
	broker := memmailbox.NewBroker()
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

// A typed body: the value is encoded as JSON; consumer.JSONHandler decodes it into
// the same type on the receiving side.
func ExampleProducer_SendJSON() {
	ctx := context.Background()
	broker := memmailbox.NewBroker()
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
