package sqsmailbox_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// A receive/ack loop against LocalStack. It needs a server, so it is
// compiled but not run. Against AWS, pass "" as the endpoint and drop the
// static credentials: the default chain finds them.
func Example() {
	ctx := context.Background()
	client, err := sqsmailbox.NewClient(ctx, "http://127.0.0.1:4566",
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")),
	)
	if err != nil {
		log.Fatal(err)
	}
	mb, err := sqsmailbox.New(client, "http://127.0.0.1:4566/000000000000/jobs")
	if err != nil {
		log.Fatal(err)
	}
	defer mb.Close()

	for ctx.Err() == nil {
		msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{
			MaxMessages:       10,
			VisibilityTimeout: time.Minute,
			WaitTime:          20 * time.Second, // long polling
		})
		if errors.Is(err, sqsloop.ErrMailboxClosed) || errors.Is(err, sqsloop.ErrQueueNotFound) {
			log.Fatal(err)
		}
		if err != nil {
			log.Print(err) // transient: throttled, network
			continue
		}
		handles := make([]string, len(msgs))
		for i, msg := range msgs {
			fmt.Println("got", msg.ID, msg.Body)
			handles[i] = msg.ReceiptHandle
		}
		if len(handles) == 0 {
			continue
		}
		// Ack (a consumer.Consumer does this for you, batched, with
		// retries and lease extension while handlers work).
		errs, err := mb.Delete(ctx, handles)
		for i, e := range errs {
			if errors.Is(e, sqsloop.ErrReceiptHandleExpired) {
				log.Printf("message %s: lease lapsed before the ack; it will be delivered again", msgs[i].ID)
			}
		}
		if err != nil {
			log.Print(err)
		}
	}
}

// Bad input is refused before any call, with an error that names the field
// and the range, matched with errors.Is.
func ExampleMailbox_Receive_invalidArgument() {
	mb, err := sqsmailbox.New(sqs.New(sqs.Options{Region: "us-east-1"}), "https://sqs.us-east-1.amazonaws.com/123456789012/jobs")
	if err != nil {
		log.Fatal(err)
	}
	_, err = mb.Receive(context.Background(), sqsloop.ReceiveRequest{MaxMessages: 11})
	fmt.Println(errors.Is(err, sqsloop.ErrInvalidArgument))
	fmt.Println(err)
	// Output:
	// true
	// sqsloop: invalid argument: ReceiveRequest.MaxMessages: must be between 1 and 10 (SQS MaxNumberOfMessages), got 11
}

// After Close every call returns ErrMailboxClosed.
func ExampleMailbox_Close() {
	mb, err := sqsmailbox.New(sqs.New(sqs.Options{Region: "us-east-1"}), "https://sqs.us-east-1.amazonaws.com/123456789012/jobs")
	if err != nil {
		log.Fatal(err)
	}
	_ = mb.Close()
	_, err = mb.Delete(context.Background(), []string{"receipt-handle"})
	fmt.Println(errors.Is(err, sqsloop.ErrMailboxClosed))
	// Output: true
}
