package consumer_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/producer"
)

// Typed bodies: the producer encodes a value as JSON, consumer.JSONHandler decodes
// it for the handler. A body that does not decode is a poison message: it
// goes to the dead-letter queue on its first delivery, with the reason.
func ExampleJSONHandler() {
	type Resize struct {
		Image string `json:"image"`
		Width int    `json:"width"`
	}
	ctx, stop := context.WithTimeout(context.Background(), 3*time.Second)
	defer stop()
	broker := new(memmailbox.Broker)
	defer broker.Close()
	// A redrive policy gives the queue its dead-letter queue, "resize-dlq".
	queue, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "resize", MaxReceiveCount: 5})
	if err != nil {
		log.Fatal(err)
	}
	p, err := producer.New(queue, producer.Config{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := p.SendJSON(ctx, Resize{Image: "cat.png", Width: 640}, sqsloop.OutgoingMessage{}); err != nil {
		log.Fatal(err)
	}
	if _, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "not JSON"}); err != nil {
		log.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		log.Fatal(err)
	}

	done := make(chan struct{})
	handler := consumer.JSONHandler(func(ctx context.Context, m *sqsloop.Message, r Resize) error {
		fmt.Printf("resize %s to %d px\n", r.Image, r.Width)
		close(done)
		return nil
	})
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	c, err := consumer.New(queue, handler, consumer.Config{WaitTime: time.Second, Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		<-done
		for c.Stats().Poisoned == 0 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		stop()
	}()
	if err := c.Run(ctx); err != nil {
		log.Fatal(err)
	}
	dead, _ := broker.Queue("resize-dlq").Receive(context.Background(), sqsloop.ReceiveRequest{MaxMessages: 1})
	fmt.Printf("dead-lettered %q after %s receive: %s\n", dead[0].Body,
		dead[0].MessageAttributes[sqsloop.AttrPoisonReceiveCount].StringValue,
		dead[0].MessageAttributes[sqsloop.AttrPoisonReason].StringValue)
	// Output:
	// resize cat.png to 640 px
	// dead-lettered "not JSON" after 1 receive: permanent failure: consumer: JSONHandler: the body does not decode into consumer_test.Resize: invalid character 'o' in literal null (expecting 'u')
}
