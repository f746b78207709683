package sqslambda_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/otelsqsloop"
	"github.com/sqsloop/sqsloop/sqslambda"
)

// The consumer's handler as a Lambda function: in main, lambda.Start(h.Handle)
// (github.com/aws/aws-lambda-go/lambda) instead of the direct call below.
// With an SQS client (Config.OpenQueue, e.g. sqsmailbox.New over an
// *sqs.Client), beating records keep their messages hidden and failed
// ones come back after the back-off.
func Example() {
	handler := func(ctx context.Context, m *sqsloop.Message) error {
		heartbeat.Beat(ctx) // as under a consumer
		if strings.HasPrefix(m.Body, "fail") {
			return errors.New("cannot do " + m.Body)
		}
		return nil
	}
	h, err := sqslambda.New(handler, sqslambda.Config{Concurrency: 4})
	if err != nil {
		log.Fatal(err)
	}
	event := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m-1", Body: "resize photo 1", EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:jobs"},
		{MessageId: "m-2", Body: "fail: photo 2 is gone", EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:jobs"},
		{MessageId: "m-3", Body: "resize photo 3", EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:jobs"},
	}}
	resp, err := h.Handle(context.Background(), event)
	fmt.Println(resp.BatchItemFailures, err)
	// Output:
	// [{m-2}] <nil>
}

func ExampleQueueURL() {
	url, err := sqslambda.QueueURL("arn:aws:sqs:eu-west-1:123456789012:jobs")
	fmt.Println(url, err)
	// Output:
	// https://sqs.eu-west-1.amazonaws.com/123456789012/jobs <nil>
}

// Reporting to OpenTelemetry on Lambda: the consumer's Observer
// (otelsqsloop, here to the global providers) for the queue the event
// source mapping reads. Each record's handler runs in its process span,
// linked to the producer's trace context the record carries.
func ExampleConfig_observer() {
	url, err := sqslambda.QueueURL("arn:aws:sqs:us-east-1:123456789012:jobs")
	if err != nil {
		log.Fatal(err)
	}
	obs, err := otelsqsloop.New(otelsqsloop.Config{QueueURL: url})
	if err != nil {
		log.Fatal(err)
	}
	h, err := sqslambda.New(func(ctx context.Context, m *sqsloop.Message) error {
		fmt.Println("processing", m.Body) // ctx carries the process span
		return nil
	}, sqslambda.Config{Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m-1", Body: "resize photo 1", EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:jobs", Attributes: map[string]string{
			"AWSTraceHeader": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"}},
	}})
	fmt.Println(resp.BatchItemFailures, err)
	// Output:
	// processing resize photo 1
	// [] <nil>
}

// Trying a function locally, or testing it, with an event as Lambda
// delivers it (ReadEvent takes AWS's sample event, or one that sam local
// generate-event prints): Invoke gives the handler the invocation's
// deadline and lambdacontext, and checks the response as the event source
// mapping reads it.
func ExampleInvoke() {
	h, err := sqslambda.New(func(ctx context.Context, m *sqsloop.Message) error {
		if strings.HasPrefix(m.Body, "fail") {
			return errors.New("cannot do " + m.Body)
		}
		return nil
	}, sqslambda.Config{})
	if err != nil {
		log.Fatal(err)
	}
	event, err := sqslambda.ReadEvent(strings.NewReader(`{"Records": [
		{"messageId": "m-1", "body": "resize photo 1", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:jobs",
		 "attributes": {"ApproximateReceiveCount": "1", "ApproximateFirstReceiveTimestamp": "1523232000001"}},
		{"messageId": "m-2", "body": "fail: photo 2 is gone", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:jobs",
		 "attributes": {"ApproximateReceiveCount": "1", "ApproximateFirstReceiveTimestamp": "1523232000001"}}]}`))
	if err != nil {
		log.Fatal(err)
	}
	resp, err := sqslambda.Invoke(context.Background(), h.Handle, event, 30*time.Second)
	fmt.Println(resp.BatchItemFailures, err)
	// Output:
	// [{m-2}] <nil>
}
