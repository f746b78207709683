package wire_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop/benchmarks/wire"
)

// A Meter counts an SQS client's requests on the wire and in the SDK.
func ExampleMeter() {
	// A stand-in SQS endpoint that answers every request with success.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, "{}")
	}))
	defer srv.Close()

	var m wire.Meter
	client := sqs.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("id", "secret", ""),
	}, func(o *sqs.Options) { o.BaseEndpoint = aws.String(srv.URL) }, m.Instrument())

	q := aws.String(srv.URL + "/000000000000/jobs")
	for range 2 {
		_, _ = client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: q})
	}
	_, _ = client.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: q, ReceiptHandle: aws.String("h")})

	s := m.Snapshot()
	fmt.Println("on the wire:", s.Wire[wire.ReceiveMessage], s.Wire[wire.DeleteMessage])
	fmt.Println("counts agree:", s.Check() == nil, "retries:", s.Retries())
	// Output:
	// on the wire: 2 1
	// counts agree: true retries: 0
}

func ExampleAction() {
	fmt.Println(wire.Action("AmazonSQS.ChangeMessageVisibilityBatch"))
	// Output: ChangeMessageVisibilityBatch
}
