package main

import (
	"context"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// newSQSQueue opens a real SQS queue (or an SQS-compatible server's) on
// endpoint ("" for AWS): the one at url, or, without a url, the queue name
// set up there with sqsmailbox.CreateQueue (2 s leases, and a dead-letter
// queue name-dlq after maxReceiveCount receives). The dead-letter queue is
// found through the redrive policy.
func newSQSQueue(ctx context.Context, endpoint, url, name string) (*queue, error) {
	client, err := sqsmailbox.NewClient(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	var mb *sqsmailbox.Mailbox
	if url != "" {
		mb, err = sqsmailbox.New(client, url)
	} else {
		mb, err = sqsmailbox.CreateQueue(ctx, client, sqsloop.QueueSpec{Name: name, VisibilityTimeout: lease, MaxReceiveCount: maxReceiveCount})
	}
	if err != nil {
		return nil, err
	}
	return newQueue(ctx, mb, mb.QueueURL(), false, func() { mb.Close() })
}
