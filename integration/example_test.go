package integration_test

import (
	"context"
	"fmt"
	"log"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/integration"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// Start the SQS-compatible server this machine can give (SQS_ENDPOINT, else
// LocalStack when a Docker engine answers, else fauxqs from the directory
// `npm ci --prefix integration` installed it in) and set up a queue on it,
// with its dead-letter queue and redrive policy, as an sqsmailbox. It needs a server, so it is compiled but
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
	mb, err := sqsmailbox.CreateQueue(ctx, client, sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 5})
	if err != nil {
		log.Fatal(err)
	}
	defer mb.Close()
	fmt.Printf("SQS_ENDPOINT=%s SQS_SERVER=%s\n", srv.Endpoint, srv.Kind)
}
