package integration_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sqsloop/sqsloop/integration"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// Start the SQS-compatible server this machine can give (SQS_ENDPOINT, else
// LocalStack when a Docker engine answers, else fauxqs from the directory
// `npm ci --prefix integration` installed it in), create a queue on it and
// open an sqsmailbox on that queue. It needs a server, so it is compiled but
// not run.
func ExampleStartSQSServer() {
	ctx := context.Background()
	srv, err := integration.StartSQSServer(ctx, integration.ServerOptions{Dir: "integration"})
	if err != nil {
		log.Fatal(err) // wraps integration.ErrNoServer when there is none to be had
	}
	defer srv.Close() // stops what StartSQSServer started

	client, err := sqsmailbox.NewClient(ctx, srv.Endpoint, srv.ConfigOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobs")})
	if err != nil {
		log.Fatal(err)
	}
	mb, err := sqsmailbox.New(client, *out.QueueUrl)
	if err != nil {
		log.Fatal(err)
	}
	defer mb.Close()
	fmt.Printf("SQS_ENDPOINT=%s SQS_SERVER=%s\n", srv.Endpoint, srv.Kind)
}
